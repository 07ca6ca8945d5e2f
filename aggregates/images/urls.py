"""Glance v2 compatible routes (mounted at /image)."""

from django.urls import path, re_path

from .api import versions, views

urlpatterns = [
    path("", versions.version_choices),
    path("/", versions.version_choices),
    path("/versions", versions.version_list),
    path("/v2/images", views.images_view),
    path("/v2/images/<str:image_id>", views.image_view),
    path("/v2/images/<str:image_id>/file", views.image_file_view),
    path("/v2/images/<str:image_id>/tags/<str:tag>", views.image_tag_view),
    path("/v2/images/<str:image_id>/members", views.image_members_view),
    path("/v2/images/<str:image_id>/members/<str:member_id>", views.image_member_view),
    path("/v2/images/<str:image_id>/actions/deactivate", views.deactivate_view),
    path("/v2/images/<str:image_id>/actions/reactivate", views.reactivate_view),
    re_path(r"^/v2/schemas/(?P<name>images?|members?)$", views.schema_view),
    re_path(r"^/v2/", views.not_found_view),
]
