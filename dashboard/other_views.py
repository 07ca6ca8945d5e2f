"""The audit log. (The placement pages are in placement_views.)"""

from django.http import HttpRequest, HttpResponse

from aggregates.audit.models import Event

from .console import console_view, page, paginate
from .filters import EventFilter


@console_view
def event_list(request: HttpRequest) -> HttpResponse:
    filtered = EventFilter(request.GET, queryset=Event.objects.order_by("-id"))
    current, querystring = paginate(request, filtered.qs)
    return page(request, {"filter": filtered, "page": current, "querystring": querystring}, "dashboard/events.html")
