"""GET / : the version document, built from the microversion table."""

from django.http import HttpResponse

from . import microversion
from .base import PlacementRequest, json_response


def home(request: PlacementRequest) -> HttpResponse:
    document = {
        "versions": [
            {
                "id": f"v{microversion.MIN_VERSION}",
                "max_version": microversion.MAX_VERSION,
                "min_version": microversion.MIN_VERSION,
                "status": "CURRENT",
                "links": [{"rel": "self", "href": ""}],
            }
        ]
    }
    return json_response(request, document)
