"""The server settings Corral ships for its web role (config/gunicorn.conf.py),
as gunicorn command-line options, for benchmarks that serve Corral (or a
side compared with it) the way a deployment does."""

import runpy
from pathlib import Path

CONF = Path(__file__).resolve().parent.parent / "config" / "gunicorn.conf.py"


def threaded_options(threads: int | None = None) -> list[str]:
    """The shipped worker class, threads a worker (``threads`` to override)
    and keep-alive; the caller's own -b, -w and --timeout stay."""
    conf = runpy.run_path(str(CONF))
    return [
        "--worker-class",
        conf["worker_class"],
        "--threads",
        str(threads or conf["threads"]),
        "--keep-alive",
        str(conf["keepalive"]),
    ]
