import gc
import os

from django.core.wsgi import get_wsgi_application

from config.chunked import WholeBodies

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Served by gunicorn (serve_demo's too) and by the development server (WSGI_APPLICATION)
# alike: chunked request bodies are read whole, or refused, never taken as empty.
application = WholeBodies(get_wsgi_application())


def _warm_up() -> None:
    """Import every route's module now, when the worker starts, instead of
    in its first request (about half a second a worker: a first request
    would wait for it under load)."""
    from django.urls import get_resolver

    from aggregates.placement_client import inprocess

    get_resolver().url_patterns  # noqa: B018 - reading it imports the URLconf and every view module
    get_resolver(inprocess.URLCONF).url_patterns  # noqa: B018 - the in-process placement's too


_warm_up()
# What the worker has imported and built so far lives as long as it does:
# moved out of the collector's reach, so that its full passes (about one
# every forty boots at 5,000 hosts, 110 ms each) walk what requests made,
# not every module, class and route of Corral and its libraries again.
gc.freeze()
