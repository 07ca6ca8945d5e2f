"""Keystone v3 compatible routes (mounted at /identity)."""

from django.urls import path, re_path

from . import api as identity

urlpatterns = [
    path("", identity.VersionListView.as_view()),
    path("/", identity.VersionListView.as_view()),
    path("/v3", identity.VersionView.as_view()),
    path("/v3/", identity.VersionView.as_view()),
    path("/v3/auth/tokens", identity.TokensView.as_view()),
    path("/v3/projects", identity.ProjectListView.as_view()),
    path("/v3/projects/<str:project_id>", identity.ProjectDetailView.as_view()),
    re_path(r"^/", identity.NotFoundView.as_view()),
]
