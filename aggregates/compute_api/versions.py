"""Compute version documents: no token, no microversion."""

from typing import Any

from django.http import HttpRequest, HttpResponseRedirect, JsonResponse

from config.public_url import public_base

from .microversions import MAX_VERSION, MIN_VERSION


def _v21(request: HttpRequest) -> dict[str, Any]:
    return {
        "id": "v2.1",
        "status": "CURRENT",
        "version": str(MAX_VERSION),
        "min_version": str(MIN_VERSION),
        "updated": "2013-07-23T11:33:21Z",
        "links": [{"rel": "self", "href": f"{public_base(request)}/compute/v2.1/"}],
    }


def _v20(request: HttpRequest) -> dict[str, Any]:
    return {
        "id": "v2.0",
        "status": "DEPRECATED",
        "version": "",
        "min_version": "",
        "updated": "2025-07-04T12:00:00Z",
        "links": [{"rel": "self", "href": f"{public_base(request)}/compute/v2/"}],
    }


def version_list(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"versions": [_v20(request), _v21(request)]})


def version_v21(request: HttpRequest) -> JsonResponse:
    doc = _v21(request)
    doc["links"].append({"rel": "describedby", "type": "text/html", "href": "https://docs.openstack.org/"})
    doc["media-types"] = [{"base": "application/json", "type": "application/vnd.openstack.compute+json;version=2.1"}]
    return JsonResponse({"version": doc})


def version_v20(request: HttpRequest) -> JsonResponse:
    """Nova's single-version document for the legacy v2.0 endpoint."""
    doc = _v20(request)
    doc["links"].append({"rel": "describedby", "type": "text/html", "href": "https://docs.openstack.org/"})
    doc["media-types"] = [{"base": "application/json", "type": "application/vnd.openstack.compute+json;version=2"}]
    return JsonResponse({"version": doc})


def version_v20_redirect(request: HttpRequest) -> HttpResponseRedirect:
    """``/compute/v2`` -> ``/compute/v2/``, as Nova does (302)."""
    response = HttpResponseRedirect(f"{public_base(request)}/compute/v2/")
    return response


def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Any path under /compute/ that is no route: a Nova JSON fault."""
    return JsonResponse({"itemNotFound": {"code": 404, "message": "The resource could not be found."}}, status=404)
