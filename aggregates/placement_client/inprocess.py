"""Corral's own placement, called in this process: a requests transport
adapter that hands the client's request straight to placement's URLconf
instead of sending it over a socket.

Why: a web worker calling its own server's /placement waits for another
worker to answer; with eager Celery (no broker) every mirroring task runs in
the request's worker after the commit, so a few concurrent requests hold
every worker and wait for each other. In process there is nothing to wait for.

The wire format is unchanged: the PlacementClient still builds an HTTP
request (method, path, query, X-Auth-Token, OpenStack-API-Version, JSON
body) and reads an HTTP answer; only the transport differs. The request goes
through Django's ``BaseHandler`` with this server's middleware
(``settings.MIDDLEWARE``, all of it) and a URLconf that mounts
``placement.urls`` at ``/placement/`` as config/urls.py does, so the answer
is the one placement gives over HTTP, byte for byte: placement's own
pipeline (placement/api/base.py) authenticates, negotiates the microversion
and renders errors; the request-id middleware gives the request id of error
bodies and of ``X-OpenStack-Request-ID``; Security, Common (Content-Length)
and X-Frame-Options add their headers. The console's middleware (static
files, sessions, CSRF, login, messages) is inert on placement's routes
(they are csrf-exempt and never touch the session, the user or messages),
so keeping it costs nothing and keeps the answer identical. What differs is
only what a web server adds (``Date``, ``Server``, ``Connection``).

What is deliberately not done: ``WSGIHandler.__call__`` sends
request_started and request_finished, whose receivers close the database
connections of the *calling* request, and so does ``HttpResponse.close()``;
neither is called here. The call shares the calling thread's database
connection, which is why it refuses to run inside a transaction
(``PlacementTransactionError``): placement's own ``transaction.atomic``
blocks then start and commit real transactions of their own, and a
placement call never holds the caller's locks.
"""

import io
import sys
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

import requests
from django.conf import settings
from django.core.handlers.base import BaseHandler
from django.core.handlers.wsgi import WSGIRequest
from django.db import connections
from django.http import HttpResponseBase
from django.urls import get_script_prefix, get_urlconf, include, path, set_script_prefix, set_urlconf
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers

from aggregates.placement_client.errors import PlacementTransactionError
from config import request_context

INPROCESS_HOST = "corral.internal"
INPROCESS_URL = f"http://{INPROCESS_HOST}/placement"
MOUNT = "placement/"

# This module is also the URLconf of the in-process requests: placement at
# /placement/, as in config/urls.py (whatever CORRAL_SERVICE says), and the
# reads placement serves Corral's own client alone (before placement's
# catch-all 404).
urlpatterns = [path(MOUNT, include("placement.internal_urls")), path(MOUNT, include("placement.urls"))]
URLCONF = __name__


def open_transaction_alias() -> str | None:
    """The alias of a database connection of this thread with a transaction
    open, if any. The transactions that Django's TestCase (and pytest-django)
    wrap each test in do not count."""
    for connection in connections.all(initialized_only=True):
        if connection.connection is None:
            continue  # not connected: no transaction (and no query to find out)
        if any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks):
            return str(connection.alias)
        if not connection.in_atomic_block and not connection.autocommit:
            return str(connection.alias)  # set_autocommit(False): a transaction by hand
    return None


def refuse_inside_transaction(what: str) -> None:
    """Raise PlacementTransactionError when a transaction is open."""
    alias = open_transaction_alias()
    if alias is not None:
        raise PlacementTransactionError(
            f"{what}: placement is never called with a database transaction open "
            f"(database {alias!r} is in one); call it after the commit (transaction.on_commit)"
        )


def normalized_url(url: str) -> str:
    return url.strip().rstrip("/")


def is_own_placement(url: str) -> bool:
    """Whether PLACEMENT_URL names Corral's own placement, served in process:
    empty (the default), the in-process URL itself, or this deployment's own
    public mount (PUBLIC_URL + /placement in the all-in-one server). Any
    other URL goes over HTTP, even to a Corral placement elsewhere."""
    url = normalized_url(url or "")
    if url in ("", INPROCESS_URL):
        return True
    public = normalized_url(settings.PUBLIC_URL or "")
    if public and settings.CORRAL_SERVICE == "all" and url == f"{public}/placement":
        return True
    return names_this_server(url)


LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def names_this_server(url: str) -> bool:
    """Whether ``url`` is the placement of the server handling the current
    request: its placement mount at the address the request came to (or a
    loopback name for the same port). Called over HTTP, it would wait for a
    worker of this same server, which may all be busy waiting likewise."""
    mount = {"all": "/placement", "placement": ""}.get(settings.CORRAL_SERVICE)
    target = urlsplit(url)
    if mount is None or target.path.rstrip("/") != mount or target.port is None:
        return False
    for base in request_context.current().served_at:
        served = urlsplit(base)
        same_host = served.hostname == target.hostname or {served.hostname, target.hostname} <= LOOPBACK
        if served.scheme == target.scheme and served.port == target.port and same_host:
            return True
    return False


class InProcessRequest(WSGIRequest):
    """A request built here, not received: its host is ours by construction,
    so it is not checked against ALLOWED_HOSTS (which protects against forged
    Host headers from outside, and may not list the internal name)."""

    def get_host(self) -> str:
        return INPROCESS_HOST


class PlacementHandler(BaseHandler):
    """Django's request handling without the WSGI server around it."""

    def __init__(self) -> None:
        super().__init__()
        self.load_middleware()


_handler: PlacementHandler | None = None


def handler() -> PlacementHandler:
    """The process's handler (built on first use: loading middleware
    imports and sets up every middleware once; the handler holds no
    per-request state, as a WSGI handler shared by threads does not)."""
    global _handler
    if _handler is None:
        _handler = PlacementHandler()
    return _handler


def wsgi_environ(request: requests.PreparedRequest) -> dict[str, Any]:
    """The WSGI environ a server would give for ``request``."""
    parts = urlsplit(request.url or "")
    body = request.body or b""
    if isinstance(body, str):
        body = body.encode("utf-8")
    elif not isinstance(body, bytes):
        body = b"".join(body)  # an iterable of chunks
    environ: dict[str, Any] = {
        "REQUEST_METHOD": (request.method or "GET").upper(),
        "SCRIPT_NAME": "",
        # WSGI servers hand PATH_INFO percent-decoded, as latin-1 text of the bytes.
        "PATH_INFO": unquote_to_bytes(parts.path or "/").decode("iso-8859-1"),
        "QUERY_STRING": parts.query,
        "SERVER_NAME": INPROCESS_HOST,
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "HTTP_HOST": INPROCESS_HOST,
    }
    if body:
        environ["CONTENT_LENGTH"] = str(len(body))
    for name, value in request.headers.items():
        key = name.upper().replace("-", "_")
        if key == "CONTENT_TYPE":
            environ["CONTENT_TYPE"] = value
        elif key == "CONTENT_LENGTH":
            environ["CONTENT_LENGTH"] = value
        elif key != "HOST":
            environ[f"HTTP_{key}"] = value
    return environ


def call_placement(request: requests.PreparedRequest) -> HttpResponseBase:
    """Run ``request`` through placement's URLconf; the Django response.
    The thread's URLconf and script prefix (those of the request being
    served, if any) are restored afterwards."""
    django_request = InProcessRequest(wsgi_environ(request))
    django_request.urlconf = URLCONF
    saved_urlconf, saved_prefix = get_urlconf(), get_script_prefix()
    set_script_prefix("/")
    try:
        return handler().get_response(django_request)
    finally:
        set_urlconf(saved_urlconf)
        set_script_prefix(saved_prefix)
        django_request.close()  # its uploaded files, if any; no request_finished signal


def to_requests_response(
    request: requests.PreparedRequest, response: HttpResponseBase, adapter: BaseAdapter
) -> requests.Response:
    """The requests.Response a socket would have given for ``response``."""
    content = b"".join(response)  # HttpResponse and StreamingHttpResponse alike
    result = requests.Response()
    result.status_code = response.status_code
    result.reason = response.reason_phrase or HTTPStatus(response.status_code).phrase
    headers: CaseInsensitiveDict[str] = CaseInsensitiveDict(response.items())
    cookies = [cookie.output(header="").strip() for cookie in response.cookies.values()]
    if cookies:  # as urllib3 folds repeated headers
        headers["Set-Cookie"] = ", ".join(cookies)
    result.headers = headers
    result.encoding = get_encoding_from_headers(result.headers)
    # As HTTPAdapter's responses once read: the body is there, nothing to stream.
    result._content = content
    result._content_consumed = True  # type: ignore[attr-defined]
    result.raw = io.BytesIO(content)
    result.url = request.url or ""
    result.request = request
    result.connection = adapter  # type: ignore[assignment]  # the stubs expect an HTTPAdapter
    return result


class InProcessAdapter(BaseAdapter):
    """The transport of INPROCESS_URL: mount it on a requests.Session."""

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        refuse_inside_transaction(f"{request.method} {request.url}")
        return to_requests_response(request, call_placement(request), self)

    def close(self) -> None:
        pass


def mount(session: requests.Session) -> requests.Session:
    """Give ``session`` the in-process transport for INPROCESS_URL."""
    session.mount(f"http://{INPROCESS_HOST}/", InProcessAdapter())
    return session
