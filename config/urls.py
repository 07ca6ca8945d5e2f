"""Root URLconf: compute API, identity, placement, console and Django admin."""

from django.conf import settings
from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path

from aggregates.compute_api import versions as compute_versions
from config import compute_urls
from placement import urls as placement_urls

urlpatterns: list[URLPattern | URLResolver]
if settings.CORRAL_SERVICE == "placement":
    # Placement alone, at the root, as upstream is deployed.
    urlpatterns = [path("", include("placement.urls"))]
else:
    urlpatterns = [
        path("compute", compute_versions.version_list),
        path("compute/", compute_versions.version_list),
        path("compute/v2.1", compute_versions.version_v21),
        path("compute/v2.1/", include(compute_urls.urlpatterns + [compute_urls.catch_all])),
        path("compute/v2", compute_versions.version_v20_redirect),
        path("compute/v2/", compute_versions.version_v20),
        re_path(r"^compute/", compute_versions.not_found),
        path("identity", include("aggregates.identity.urls")),
        path("image", include("aggregates.images.urls")),
        path("placement", placement_urls.root_view),
        path("placement/", include("placement.urls")),
        path("admin/", admin.site.urls),
        path("", include("dashboard.urls")),
    ]
