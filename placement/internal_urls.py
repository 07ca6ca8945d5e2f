"""Routes Corral's placement serves only to Corral's own in-process client
(aggregates/placement_client/inprocess.py mounts them beside placement.urls): reads
that save the client one request per provider. They are not part of the
Placement API and no HTTP client can reach them."""

from placement.api import usages
from placement.api.base import Route

ROUTES = [
    Route("_corral/provider_usages", GET=usages.usages_of_providers),
    Route("_corral/provider_rooms", GET=usages.rooms_of_providers),
]

urlpatterns = [route.urlpattern() for route in ROUTES]
