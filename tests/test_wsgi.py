"""The WSGI application a worker loads is ready for its first request: the
URLconfs (the public one and the in-process placement's) and every view
module are imported when the worker starts, not while a request waits."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.processes
def test_loading_the_wsgi_application_imports_every_route():
    code = (
        "import sys, config.wsgi\n"
        "wanted = ['config.urls', 'aggregates.servers.api', 'aggregates.host_aggregates.api', 'placement.urls',\n"
        "          'placement.internal_urls', 'dashboard.views']\n"
        "print(','.join(m for m in wanted if m not in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == ""
