"""Routes of this module are added to urlpatterns below."""
urlpatterns = []
