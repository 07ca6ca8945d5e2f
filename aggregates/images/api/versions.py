"""Glance's version documents: no token. ``/`` answers 300 Multiple Choices
with the version list, ``/versions`` the same list with 200."""

from typing import Any

from django.http import HttpRequest, JsonResponse

from config.public_url import public_base

# What Glance lists with its default configuration (no multiple stores, no
# cache directory configured): v2.17 CURRENT, the others SUPPORTED. Corral
# implements a subset of v2 (docs/api/images.md); clients only look for a
# CURRENT v2.x whose self link is the v2 root.
VERSIONS = ("2.17", "2.16", "2.15", "2.14", "2.9", "2.7", "2.6", "2.5", "2.4", "2.3", "2.2", "2.1", "2.0")


def versions_body(request: HttpRequest) -> dict[str, list[dict[str, Any]]]:
    href = f"{public_base(request)}/image/v2/"
    return {
        "versions": [
            {
                "id": f"v{version}",
                "status": "CURRENT" if index == 0 else "SUPPORTED",
                "links": [{"rel": "self", "href": href}],
            }
            for index, version in enumerate(VERSIONS)
        ]
    }


def version_choices(request: HttpRequest) -> JsonResponse:
    """GET /image and /image/: 300, as Glance answers at its root."""
    return JsonResponse(versions_body(request), status=300)


def version_list(request: HttpRequest) -> JsonResponse:
    """GET /image/versions: 200."""
    return JsonResponse(versions_body(request))
