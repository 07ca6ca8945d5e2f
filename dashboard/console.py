"""What every console view shares: who may see and change, the caller the
service functions get, rendering, pagination and service errors as form errors."""
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import render

from aggregates.context import Caller

PAGE_SIZE = 50
READ_ONLY_MESSAGE = "Your account may read the console but not change it. Ask an admin."
NO_ROLE_MESSAGE = "The console is for admins and readers: your account holds neither role. Ask an admin."


def caller_of(request):
    """The service-layer caller for the logged-in console user, remembered per request."""
    if not hasattr(request, "_console_caller"):
        request._console_caller = Caller.for_user(request.user, getattr(request, "request_id", ""))
    return request._console_caller


def can_change(request):
    return caller_of(request).is_admin


def console_view(view=None, *, form_page=False):
    """Only active staff users reach the console; anyone else is sent to log in,
    and staff holding neither the admin nor the reader role get 403. Writes
    (any method but GET/HEAD) are for admins only: readers get 403, as they
    do for a ``form_page`` (a page that exists only to change something)."""
    if view is None:
        return lambda view: console_view(view, form_page=form_page)

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        user = request.user
        if not (user.is_authenticated and user.is_active and user.is_staff):
            return redirect_to_login(request.get_full_path(), "dashboard:login")
        if not caller_of(request).can_read_admin_views:
            raise PermissionDenied(NO_ROLE_MESSAGE)
        if (form_page or request.method not in ("GET", "HEAD")) and not can_change(request):
            raise PermissionDenied(READ_ONLY_MESSAGE)
        return view(request, *args, **kwargs)

    return wrapped


def page(request, context, template, status=200):
    """Render a console page; templates learn whether the user may change things."""
    return render(request, template, {**context, "can_change": can_change(request)}, status=status)


def paginate(request, queryset, per_page=PAGE_SIZE):
    """The requested page of ``queryset`` and the query string for page links
    (the current filters and sort, without the page number)."""
    paginator = Paginator(queryset, per_page)
    current = paginator.get_page(request.GET.get("page"))
    params = request.GET.copy()
    params.pop("page", None)
    encoded = params.urlencode()
    return current, (encoded + "&" if encoded else "")


def form_error(form, exc, field=None):
    """Show a service error beside ``field`` (or above the form)."""
    form.add_error(field, exc.message)
