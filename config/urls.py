"""Root URLconf: compute API, identity, placement, console and Django admin;
the health check and the metrics at the top, on every service."""

from django.conf import settings
from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path

from aggregates.compute_api import versions as compute_versions
from aggregates.health import views as health_views
from aggregates.metrics import views as metrics_views
from config import compute_urls
from placement import urls as placement_urls

# Before any API or the console's catch-all, whichever service this process is.
operations: list[URLPattern | URLResolver] = [
    path("healthcheck", health_views.healthcheck),
    path("metrics", metrics_views.metrics),
]

urlpatterns: list[URLPattern | URLResolver]
if settings.CORRAL_SERVICE == "placement":
    # Placement alone, at the root, as upstream is deployed.
    urlpatterns = [*operations, path("", include("placement.urls"))]
else:
    urlpatterns = [
        *operations,
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
