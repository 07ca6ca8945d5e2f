"""The console's middleware. Response headers of its pages: a
Content-Security-Policy that allows the console's own static files only (no
inline script or style), and ``Cache-Control: no-store`` on every page an
authenticated user sees, so a shared browser's cache or back button shows
nothing after logging out. With an external Keystone, the console's user is
the session's Keystone token (dashboard/keystone_login.py)."""

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.cache import add_never_cache_headers

from aggregates.identity import keystone
from config.policy import TokenCheckUnavailable

from .keystone_login import session_user, unavailable

CONSOLE_NAMESPACE = "dashboard"


class ConsoleSecurityMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        if match is None or CONSOLE_NAMESPACE not in match.namespaces:
            return response
        if settings.CONSOLE_CONTENT_SECURITY_POLICY:
            response.headers.setdefault("Content-Security-Policy", settings.CONSOLE_CONTENT_SECURITY_POLICY)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            add_never_cache_headers(response)
        return response


class KeystoneConsoleMiddleware:
    """With ``AUTH_STRATEGY=external-keystone``, a console request's user is
    the one its session's Keystone token stands for (validated, cached as
    the APIs' token checks), or anonymous when there is none or Keystone no
    longer accepts it; Keystone not answering (at the start of the page or
    in its middle) is a 503 page. Other surfaces and Corral's own identity
    modes are left alone."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: object, args: object, kwargs: object) -> HttpResponseBase | None:
        if not keystone.is_external():
            return None
        match = request.resolver_match
        if match is None or CONSOLE_NAMESPACE not in match.namespaces:
            return None
        try:
            request.user = session_user(request)  # type: ignore[assignment]  # not a Django user: a token's
        except TokenCheckUnavailable:
            request.user = AnonymousUser()
            return unavailable(request)
        return None

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponseBase | None:
        """Keystone not answering in the middle of a console page (the
        service user's token for Corral's calls to placement): 503, as at its start."""
        if not isinstance(exception, TokenCheckUnavailable):
            return None
        match = request.resolver_match
        if match is None or CONSOLE_NAMESPACE not in match.namespaces:
            return None
        return unavailable(request)
