"""Nova's deprecated image proxy of the compute API: ``/images``,
``/images/detail``, ``/images/{id}`` (GET, DELETE) up to 2.35, 404 from
2.36 as in Nova. It shows Corral's own images in Nova's image view, under
the image API's visibility rule and through its service functions."""

from datetime import UTC

from django.utils.dateparse import parse_datetime
from rest_framework.response import Response

from aggregates.compute_api.auth import caller_of
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.errors import ApiError
from aggregates.compute_api.microversions import APIVersion, ComputeRequest
from aggregates.errors import Forbidden, NotFound
from aggregates.images import serializers, services
from aggregates.images.models import Image
from config.public_url import public_base

MAX_PROXY_VERSION = APIVersion(2, 35)

# Nova's list filters and the image API's names for them.
FILTERS = {"name": "name", "status": "status", "minRam": "min_ram", "minDisk": "min_disk"}
PROPERTY_FILTERS = {"server": "instance_uuid", "type": "image_type"}


def _query(request: ComputeRequest) -> services.ImageQuery:
    """Nova's list query string as the image API's query; other parameters are ignored."""
    params: dict[str, str] = {name: request.query_params.getlist(name)[-1] for name in request.query_params}
    query = services.ImageQuery()
    for name, value in params.items():
        if name in FILTERS:
            query.filters[FILTERS[name]] = value.lower() if name == "status" else value
        elif name in PROPERTY_FILTERS:
            query.properties[PROPERTY_FILTERS[name]] = value.rsplit("/", 1)[-1] if name == "server" else value
        elif name.startswith("property-"):
            query.properties[name.removeprefix("property-")] = value
    if "changes-since" in params:
        value = params["changes-since"]
        try:
            since = parse_datetime(value)
        except ValueError:
            since = None
        if since is None:
            raise ApiError(400, f"Invalid filter value {value}. Unable to parse a date and time.")
        query.updated_since = since if since.tzinfo else since.replace(tzinfo=UTC)
    if "limit" in params:
        try:
            query.limit = int(params["limit"])
        except ValueError:
            raise ApiError(400, "limit param must be an integer")
        if query.limit < 0:
            raise ApiError(400, "limit param must be positive")
    if "marker" in params:
        query.marker = params["marker"]
    return query


def _images_body(request: ComputeRequest, images: list[Image], detail: bool, limit: int | None) -> Response:
    base = public_base(request)
    render = serializers.nova_image if detail else serializers.nova_image_brief
    body = serializers.nova_image_list(base, [render(base, image) for image in images], detail, limit, request)
    return Response(body)


class ImageListView(ComputeAPIView):
    max_version = MAX_PROXY_VERSION
    detail = False

    def get(self, request: ComputeRequest) -> Response:
        caller = caller_of(request)
        query = _query(request)
        images = services.list_all_images(caller, query)
        return _images_body(request, images, self.detail, query.limit)


class ImageDetailListView(ImageListView):
    detail = True


class ImageView(ComputeAPIView):
    max_version = MAX_PROXY_VERSION

    def get(self, request: ComputeRequest, image_id: str) -> Response:
        caller = caller_of(request)
        try:
            image = services.get_image(caller, image_id)
        except NotFound:
            raise ApiError(404, "Image not found.")
        return Response({"image": serializers.nova_image(public_base(request), image)})

    def delete(self, request: ComputeRequest, image_id: str) -> Response:
        caller = caller_of(request)
        try:
            services.delete_image(caller, image_id)
        except NotFound:
            raise ApiError(404, "Image not found.")
        except Forbidden:
            raise ApiError(403, "You are not allowed to delete the image.")
        return Response(status=204)
