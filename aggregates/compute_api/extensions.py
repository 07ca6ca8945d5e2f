"""Nova's list of v2.1 extensions (``GET /extensions``, ``/extensions/{alias}``),
answered at every microversion to every caller as Nova's current code
answers it: a fixed list, in Nova's order, kept for old clients."""

import json
from pathlib import Path
from typing import Any

from rest_framework.response import Response

from .auth import enforce
from .base import ComputeAPIView
from .errors import ApiError
from .microversions import ComputeRequest
from .query import query_params

POLICY = "os_compute_api:extensions"

# [alias, name, description] of each, as Nova lists them.
_EXTENSIONS = json.loads((Path(__file__).parent / "extensions.json").read_text())

EXTENSIONS: list[dict[str, Any]] = [
    {
        "alias": alias,
        "description": description,
        "links": [],
        "name": name,
        "namespace": "http://docs.openstack.org/compute/ext/fake_xml",
        "updated": "2014-12-03T00:00:00Z",
    }
    for alias, name, description in _EXTENSIONS
]


def _check_query(request: ComputeRequest) -> None:
    """Unknown query parameters are ignored up to 2.101 and refused from 2.102."""
    strict = request.version >= (2, 102)
    query_params(request, {"type": "object", "properties": {}, "additionalProperties": not strict})


class ExtensionListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        _check_query(request)
        enforce(request, POLICY)
        return Response({"extensions": EXTENSIONS})


class ExtensionView(ComputeAPIView):
    def get(self, request: ComputeRequest, alias: str) -> Response:
        _check_query(request)
        enforce(request, POLICY)
        for extension in EXTENSIONS:
            if extension["alias"] == alias:
                return Response({"extension": extension})
        raise ApiError(404, "The resource could not be found.")
