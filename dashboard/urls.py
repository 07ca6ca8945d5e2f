from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from . import (
    aggregate_views,
    flavor_views,
    host_views,
    image_views,
    maintenance_views,
    other_views,
    placement_views,
    precache_views,
    scheduling_views,
    search_views,
    server_views,
    views,
)
from .forms import ThrottledLoginForm

app_name = "dashboard"
urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", RedirectView.as_view(url=static("dashboard/favicon.svg"), permanent=True), name="favicon"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="dashboard/login.html", next_page="dashboard:home", authentication_form=ThrottledLoginForm
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(next_page="dashboard:login"), name="logout"),
    path("aggregates/", aggregate_views.aggregate_list, name="aggregates"),
    path("aggregates/new/", aggregate_views.aggregate_create, name="aggregate_create"),
    path("aggregates/<int:aggregate_id>/", aggregate_views.aggregate_detail, name="aggregate"),
    path("aggregates/<int:aggregate_id>/edit/", aggregate_views.aggregate_edit, name="aggregate_edit"),
    path("aggregates/<int:aggregate_id>/metadata/", aggregate_views.aggregate_metadata, name="aggregate_metadata"),
    path("aggregates/<int:aggregate_id>/hosts/add/", aggregate_views.aggregate_add_hosts, name="aggregate_add_hosts"),
    path(
        "aggregates/<int:aggregate_id>/hosts/remove/",
        aggregate_views.aggregate_remove_hosts,
        name="aggregate_remove_hosts",
    ),
    path("aggregates/<int:aggregate_id>/delete/", aggregate_views.aggregate_delete, name="aggregate_delete"),
    path("zones/", host_views.zone_list, name="zones"),
    path("hosts/", host_views.host_list, name="hosts"),
    path("hosts/<str:host>/", host_views.host_detail, name="host"),
    path("hosts/<str:host>/status/", host_views.host_status, name="host_status"),
    path("hosts/<str:host>/maintenance/", host_views.host_maintenance, name="host_maintenance"),
    path("maintenance/jobs/", maintenance_views.job_list, name="maintenance_jobs"),
    path("maintenance/jobs/<uuid:job_uuid>/", maintenance_views.job_detail, name="maintenance_job"),
    path("maintenance/jobs/<uuid:job_uuid>/progress/", maintenance_views.job_progress, name="maintenance_job_progress"),
    path("maintenance/headroom/", maintenance_views.headroom, name="maintenance_headroom"),
    path("flavors/", flavor_views.flavor_list, name="flavors"),
    path("flavors/new/", flavor_views.flavor_create, name="flavor_create"),
    path("flavors/<str:flavorid>/", flavor_views.flavor_detail, name="flavor"),
    path("flavors/<str:flavorid>/extra-specs/", flavor_views.flavor_set_spec, name="flavor_set_spec"),
    path("flavors/<str:flavorid>/extra-specs/delete/", flavor_views.flavor_delete_spec, name="flavor_delete_spec"),
    path("flavors/<str:flavorid>/delete/", flavor_views.flavor_delete, name="flavor_delete"),
    path("resource-providers/", placement_views.provider_list, name="providers"),
    path("resource-providers/<str:uuid>/", placement_views.provider_detail, name="provider"),
    path("aggregates/<int:aggregate_id>/cache-images/", precache_views.aggregate_cache, name="aggregate_cache"),
    path(
        "aggregates/<int:aggregate_id>/cache-schedules/",
        precache_views.schedule_create,
        name="image_cache_schedule_create",
    ),
    path("images/cache-jobs/", precache_views.job_list, name="image_cache_jobs"),
    path("images/cache-jobs/<uuid:job_uuid>/", precache_views.job_detail, name="image_cache_job"),
    path("images/cache-jobs/<uuid:job_uuid>/progress/", precache_views.job_progress, name="image_cache_job_progress"),
    path("images/cache-schedules/<int:schedule_id>/", precache_views.schedule_edit, name="image_cache_schedule"),
    path(
        "images/cache-schedules/<int:schedule_id>/delete/",
        precache_views.schedule_delete,
        name="image_cache_schedule_delete",
    ),
    path("images/", image_views.image_list, name="images"),
    path("images/new/", image_views.image_create, name="image_create"),
    path("images/<uuid:image_id>/", image_views.image_detail, name="image"),
    path("images/<uuid:image_id>/upload/", image_views.image_upload, name="image_upload"),
    path("images/<uuid:image_id>/delete/", image_views.image_delete, name="image_delete"),
    path("scheduling/", scheduling_views.explain, name="scheduling"),
    path("scheduling/decisions/<str:decision_uuid>/", scheduling_views.decision_detail, name="scheduling_decision"),
    path("servers/", server_views.server_list, name="servers"),
    path("servers/new/", server_views.server_create, name="server_create"),
    path("servers/<str:server_uuid>/", server_views.server_detail, name="server"),
    path("servers/<str:server_uuid>/delete/", server_views.server_delete, name="server_delete"),
    path("events/", other_views.event_list, name="events"),
    path("search/", search_views.search, name="search"),
]
