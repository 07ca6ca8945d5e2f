"""The root URL clients reach Corral at, shared by every API that builds
URLs (the compute API's links and Location headers, the identity catalog,
placement's WWW-Authenticate): PUBLIC_URL when set, else the request's own
scheme and host (a host ALLOWED_HOSTS admits)."""

from django.conf import settings
from django.http import HttpRequest
from rest_framework.request import Request


def public_base(request: HttpRequest | Request) -> str:

    return settings.PUBLIC_URL or f"{request.scheme}://{request.get_host()}"


def keystone_uri(request: HttpRequest | Request, own: str | None = None) -> str:
    """Where a 401's ``WWW-Authenticate`` sends clients for a token: the
    external Keystone (AUTH_STRATEGY=external-keystone), else Corral's own
    identity API (``own`` when the caller names it otherwise)."""
    if settings.AUTH_STRATEGY == "external-keystone":
        return str(settings.KEYSTONE_AUTH_URL)
    return own if own is not None else f"{public_base(request)}/identity"
