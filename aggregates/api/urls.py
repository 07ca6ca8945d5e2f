"""Compute API v2.1 routes (mounted at /compute/v2.1/)."""
from django.urls import path, re_path

from . import aggregates, flavors, hosts, versions
from .base import ComputeAPIView
from .errors import ApiError


class UnknownRouteView(ComputeAPIView):
    """Any other path under /compute/v2.1/: a Nova-style 404."""

    def _not_found(self, request, *args, **kwargs):
        raise ApiError(404, "The resource could not be found.")

    get = post = put = delete = patch = _not_found


urlpatterns = [
    path("", versions.version_v21),
    path("os-aggregates", aggregates.AggregateListView.as_view()),
    path("os-aggregates/<str:aggregate_id>", aggregates.AggregateDetailView.as_view()),
    path("os-aggregates/<str:aggregate_id>/action", aggregates.AggregateActionView.as_view()),
    *flavors.urlpatterns,
    *hosts.urlpatterns,
]

# Appended last by config.urls so that every other route wins.
catch_all = re_path(r"^.*$", UnknownRouteView.as_view())
