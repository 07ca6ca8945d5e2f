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
    path("/v3/projects/<str:project_id>/users/<str:user_id>/roles", identity.ProjectUserRolesView.as_view()),
    path(
        "/v3/projects/<str:project_id>/users/<str:user_id>/roles/<str:role_id>",
        identity.ProjectUserRoleView.as_view(),
    ),
    path("/v3/users", identity.UserListView.as_view()),
    path("/v3/users/<str:user_id>", identity.UserDetailView.as_view()),
    path("/v3/users/<str:user_id>/password", identity.UserPasswordView.as_view()),
    path("/v3/users/<str:user_id>/projects", identity.UserProjectsView.as_view()),
    path("/v3/roles", identity.RoleListView.as_view()),
    path("/v3/roles/<str:role_id>", identity.RoleDetailView.as_view()),
    path("/v3/role_assignments", identity.RoleAssignmentListView.as_view()),
    path("/v3/domains", identity.DomainListView.as_view()),
    path("/v3/domains/<str:domain_id>", identity.DomainDetailView.as_view()),
    re_path(r"^/", identity.NotFoundView.as_view()),
]
