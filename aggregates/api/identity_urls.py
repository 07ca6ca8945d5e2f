"""Keystone v3 compatible routes (mounted at /identity)."""
urlpatterns = []
