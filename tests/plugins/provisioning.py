"""A whole run (no paths, no -m) starts installing the outside tools at
once, in the background of the main process (tests/provision.py), so that
the install overlaps the tests that need none; a narrower run installs a
tool when its first test asks for it (the session fixtures do)."""

import pytest

from tests import provision


def pytest_configure(config):
    if hasattr(config, "workerinput"):  # an xdist worker: the main process does it
        return
    whole_run = config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.markexpr
    if whole_run and not config.option.collectonly:
        provision.install_in_background()
