"""Placement API routes (mounted at /placement/, or at / with CORRAL_SERVICE=placement)."""
urlpatterns = []
