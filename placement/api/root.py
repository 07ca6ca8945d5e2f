"""GET / : the version document, built from the microversion table."""

from . import microversion
from .base import json_response


def home(request):
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
