"""Response headers of the console's pages: a Content-Security-Policy that
allows the console's own static files only (no inline script or style), and
``Cache-Control: no-store`` on every page an authenticated user sees, so a
shared browser's cache or back button shows nothing after logging out."""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.cache import add_never_cache_headers

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
