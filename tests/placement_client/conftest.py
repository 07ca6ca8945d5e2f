"""The placement client's tests run against the placements of
tests/mirroring/conftest.py: upstream Placement (``placement``), Corral's
own under live_server (``own_placement``), and a port where nothing listens."""

from tests.mirroring.conftest import (  # noqa: F401 - the fixtures
    closed_port_url,
    own_placement,
    placement,
    upstream_placement,
)
