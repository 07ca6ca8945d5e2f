from django.contrib.auth import views as auth_views
from django.urls import path

from . import aggregate_views, flavor_views, host_views, other_views, views

app_name = "dashboard"
urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(template_name="dashboard/login.html", next_page="dashboard:home"),
         name="login"),
    path("logout/", auth_views.LogoutView.as_view(next_page="dashboard:login"), name="logout"),
    path("aggregates/", aggregate_views.aggregate_list, name="aggregates"),
    path("aggregates/new/", aggregate_views.aggregate_create, name="aggregate_create"),
    path("aggregates/<int:aggregate_id>/", aggregate_views.aggregate_detail, name="aggregate"),
    path("aggregates/<int:aggregate_id>/edit/", aggregate_views.aggregate_edit, name="aggregate_edit"),
    path("aggregates/<int:aggregate_id>/metadata/", aggregate_views.aggregate_metadata, name="aggregate_metadata"),
    path("aggregates/<int:aggregate_id>/hosts/add/", aggregate_views.aggregate_add_hosts, name="aggregate_add_hosts"),
    path("aggregates/<int:aggregate_id>/hosts/remove/", aggregate_views.aggregate_remove_hosts,
         name="aggregate_remove_hosts"),
    path("aggregates/<int:aggregate_id>/delete/", aggregate_views.aggregate_delete, name="aggregate_delete"),
    path("zones/", host_views.zone_list, name="zones"),
    path("hosts/", host_views.host_list, name="hosts"),
    path("hosts/<str:host>/", host_views.host_detail, name="host"),
    path("hosts/<str:host>/status/", host_views.host_status, name="host_status"),
    path("flavors/", flavor_views.flavor_list, name="flavors"),
    path("flavors/new/", flavor_views.flavor_create, name="flavor_create"),
    path("flavors/<str:flavorid>/", flavor_views.flavor_detail, name="flavor"),
    path("flavors/<str:flavorid>/extra-specs/", flavor_views.flavor_set_spec, name="flavor_set_spec"),
    path("flavors/<str:flavorid>/extra-specs/delete/", flavor_views.flavor_delete_spec, name="flavor_delete_spec"),
    path("flavors/<str:flavorid>/delete/", flavor_views.flavor_delete, name="flavor_delete"),
    path("resource-providers/", other_views.provider_list, name="providers"),
    path("resource-providers/<str:uuid>/", other_views.provider_detail, name="provider"),
    path("events/", other_views.event_list, name="events"),
]
