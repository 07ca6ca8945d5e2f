"""What every console view shares: who may see and change, the caller the
service functions get, rendering, pagination and service errors as form errors."""

from collections.abc import Callable, Mapping
from functools import wraps
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from django import forms
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from aggregates.errors import ServiceError
from aggregates.identity import keystone
from aggregates.identity.caller import Caller
from config import request_context

from .keystone_login import KeystoneUser

if TYPE_CHECKING:
    from django.contrib.auth.models import _User as User
    from django.core.paginator import _SupportsPagination

    class ConsoleRequest(HttpRequest):
        """A console request (for type checking only): the caller of its
        service calls, remembered on it."""

        _console_caller: Caller


T = TypeVar("T")
# A console view: (request, the path's values) -> the response.
View = TypeVar("View", bound=Callable[..., HttpResponseBase])

PAGE_SIZE = 50
READ_ONLY_MESSAGE = "Your account may read the console but not change it. Ask an admin."
NO_ROLE_MESSAGE = "The console is for admins and readers: your account holds neither role. Ask an admin."
# With an external Keystone every member's token says reader: the policy's admin_reader_api decides.
NO_ROLE_MESSAGE_KEYSTONE = (
    "The console's policy (admin_reader_api) gives your roles on this project nothing to see. Ask an admin."
)


def caller_of(request: HttpRequest) -> Caller:
    """The service-layer caller for the logged-in console user, remembered per request."""
    console = cast("ConsoleRequest", request)
    if not hasattr(console, "_console_caller"):
        # Console views call it once console_view let the user in (a logged-in staff
        # user, or with an external Keystone the session token's user).
        request_id = getattr(console, "request_id", "")
        if isinstance(console.user, KeystoneUser):
            console._console_caller = keystone.caller_for(console.user.facts, request_id)
        else:
            console._console_caller = Caller.for_user(cast("User", console.user), request_id)
        request_context.update(user=console._console_caller.username)
    return console._console_caller


def can_change(request: HttpRequest) -> bool:
    """Whether the console offers changes: the policy's administrator."""
    return caller_of(request).may("context_is_admin")


def own_identity_only(view: View) -> View:
    """A page of Corral's own identity (its projects and users): not found
    with an external Keystone, as /identity is not served there."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if keystone.is_external():
            raise Http404("Projects and users are the cloud's Keystone's.")
        return view(request, *args, **kwargs)

    return cast(View, wrapped)


@overload
def console_view(view: View, *, form_page: bool = False) -> View: ...


@overload
def console_view(view: None = None, *, form_page: bool = False) -> Callable[[View], View]: ...


def console_view(view: View | None = None, *, form_page: bool = False) -> View | Callable[[View], View]:
    """Only active staff users reach the console; anyone else is sent to log in,
    and staff holding neither the admin nor the reader role get 403. Writes
    (any method but GET/HEAD) are for admins only: readers get 403, as they
    do for a ``form_page`` (a page that exists only to change something)."""
    if view is None:
        return lambda view: console_view(view, form_page=form_page)

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        user = request.user
        if not (user.is_authenticated and user.is_active and user.is_staff):
            return redirect_to_login(request.get_full_path(), "dashboard:login")
        if not caller_of(request).can_read_admin_views:
            # Nothing in the console is for this account: offer to log out, not a way back in.
            message = NO_ROLE_MESSAGE_KEYSTONE if keystone.is_external() else NO_ROLE_MESSAGE
            return render(request, "dashboard/refused.html", {"message": message, "refused": True}, status=403)
        if (form_page or request.method not in ("GET", "HEAD")) and not can_change(request):
            raise PermissionDenied(READ_ONLY_MESSAGE)
        return view(request, *args, **kwargs)

    return cast(View, wrapped)


def page(request: HttpRequest, context: Mapping[str, Any], template: str, status: int = 200) -> HttpResponse:
    """Render a console page; templates learn whether the user may change things.
    A page rendered in answer to a POST (a refused form) names the address a
    refresh should load (``canonical_url``, put in the history by console.js)
    so that a refresh never posts the form again."""
    if request.method == "POST":
        context = {"canonical_url": request.path, **context}
    return render(request, template, {**context, "can_change": can_change(request)}, status=status)


def paginate(
    request: HttpRequest, queryset: "_SupportsPagination[T]", per_page: int = PAGE_SIZE
) -> tuple[Page[T], str]:
    """The requested page of ``queryset`` and the query string for page links
    (the current filters and sort, without the page number)."""
    paginator = Paginator(queryset, per_page)
    current = paginator.get_page(request.GET.get("page"))
    params = request.GET.copy()
    params.pop("page", None)
    encoded = params.urlencode()
    return current, (encoded + "&" if encoded else "")


def form_error(form: forms.BaseForm, exc: ServiceError, field: str | None = None) -> None:
    """Show a service error beside the field it is about (``field``, else
    ``exc.field``), or above the form when the form has no such field."""
    field = field or exc.field
    form.add_error(field if field in form.fields else None, exc.message)


def redirect_next(request: HttpRequest, default: str, *args: Any) -> HttpResponseRedirect:
    """Redirect to the form's ``next`` when it is a path of this site (never
    another host, scheme or ``//host``), else to ``default``."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target.startswith("/") and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=False
    ):
        return redirect(target)
    return redirect(default, *args)


def list_url(name: str, query: str | None) -> str:
    """The list page ``name`` with ``query``, the list's query string as a
    bulk form carried it (its filters, sort and page): parsed and re-encoded,
    so only parameters of that page come through (never another address)."""
    params = QueryDict(query or "", mutable=True)
    params.pop("format", None)
    encoded = params.urlencode()
    return reverse(name) + (f"?{encoded}" if encoded else "")
