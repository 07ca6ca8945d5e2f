"""Loaded by Tempest's test workers when bench/tempest_api.sh runs without
TEMPEST_STOCK=1: the compute test classes that ask for a default network
(``create_default_network = True``, Tempest's bug 1844568: Neutron's
default network) are skipped whole by Tempest when Neutron is not
available, the server, metadata, tags, instance-action, password and
live-migration classes among them. Corral gives every server its addresses
from its own pools, so those classes are run here without that request;
their tests are unchanged."""

import os

if os.environ.get("CORRAL_TEMPEST_NO_DEFAULT_NETWORK") == "1":
    from typing import Any

    from tempest.api.compute import base

    def _no_default_network(cls: Any, **kwargs: Any) -> None:
        super(base.BaseV2ComputeTest, cls).__init_subclass__(**kwargs)
        cls.create_default_network = False

    base.BaseV2ComputeTest.__init_subclass__ = classmethod(_no_default_network)  # type: ignore[assignment]
