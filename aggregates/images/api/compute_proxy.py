"""Nova's deprecated image proxy of the compute API: ``/images``,
``/images/detail``, ``/images/{id}`` (GET, DELETE) up to 2.35, 404 from
2.36 as in Nova, and ``/images/{id}/metadata[/{key}]`` up to 2.38. It
shows Corral's own images in Nova's image view, under the image API's
visibility rule and through its service functions."""

from datetime import UTC

from django.utils.dateparse import parse_datetime
from rest_framework.response import Response

from aggregates import value_schemas
from aggregates.compute_api.auth import caller_of
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.errors import ApiError
from aggregates.compute_api.microversions import APIVersion, ComputeRequest
from aggregates.compute_api.query import query_params
from aggregates.compute_api.validation import validate
from aggregates.errors import Forbidden, NotFound
from aggregates.identity.caller import Caller
from aggregates.images import serializers, services
from aggregates.images.models import Image
from aggregates.quotas import services as quotas
from aggregates.value_schemas import METADATA_BODY, METADATA_ITEM_BODY
from config.public_url import public_base

MAX_PROXY_VERSION = APIVersion(2, 35)

# Nova's list filters and the image API's names for them.
FILTERS = {"name": "name", "status": "status", "minRam": "min_ram", "minDisk": "min_disk"}
PROPERTY_FILTERS = {"server": "instance_uuid", "type": "image_type"}
# Nova checks only the paging numbers' form; other parameters pass.
LIST_QUERY = value_schemas.query(
    {name: value_schemas.non_negative_integer_query for name in ("limit", "page_size", "offset")}
)


def _query(request: ComputeRequest) -> services.ImageQuery:
    """Nova's list query string as the image API's query; other parameters are ignored."""
    query_params(request, LIST_QUERY)
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
        query.limit = int(params["limit"]) or None  # 0 asks for no limit, as in Nova
    if params.get("marker"):
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


# --- /images/{id}/metadata[/{key}] (to 2.38, 404 from 2.39 as in Nova) ---------------

MAX_METADATA_PROXY_VERSION = APIVersion(2, 38)


def _properties(caller: Caller, image_id: str) -> dict[str, str]:
    try:
        return services.properties_of(services.get_image(caller, image_id))
    except NotFound:
        raise ApiError(404, "Image not found.")


def _save(caller: Caller, image_id: str, changes: list[services.Change], properties: dict[str, str]) -> None:
    """Write the image's new properties through the image API's update,
    after Nova's quota check (the caller's project's metadata items quota)."""
    try:
        quotas.check_metadata_items(caller.project_id, len(properties))
    except quotas.QuotaExceeded:
        raise ApiError(403, "Image metadata limit exceeded") from None
    for change in changes:
        # Metadata is the image's extra properties: never one of its attributes.
        if change.op != "remove" and change.name in services.CORE:
            raise ApiError(400, f"Metadata key {change.name} names an image attribute, not a property.")
        try:
            services.check_name(change.name)
        except Forbidden as exc:
            raise ApiError(403, exc.message)
    try:
        services.update_image(caller, image_id, changes)
    except NotFound:
        raise ApiError(404, "Image not found.")
    except Forbidden:
        raise ApiError(403, f"Not authorized for image {image_id}.")


class ImageMetadataView(ComputeAPIView):
    max_version = MAX_METADATA_PROXY_VERSION

    def get(self, request: ComputeRequest, image_id: str) -> Response:
        return Response({"metadata": _properties(caller_of(request), image_id)})

    def post(self, request: ComputeRequest, image_id: str) -> Response:
        """Merge the given items into the image's metadata."""
        body = validate(self.body(request), METADATA_BODY)["metadata"]
        caller = caller_of(request)
        properties = {**_properties(caller, image_id), **body}
        _save(caller, image_id, [services.Change("add", key, value) for key, value in body.items()], properties)
        return Response({"metadata": _properties(caller, image_id)})

    def put(self, request: ComputeRequest, image_id: str) -> Response:
        """Replace the image's metadata with the given items."""
        body = validate(self.body(request), METADATA_BODY)["metadata"]
        caller = caller_of(request)
        gone = [key for key in _properties(caller, image_id) if key not in body]
        changes = [services.Change("remove", key) for key in gone]
        changes += [services.Change("add", key, value) for key, value in body.items()]
        _save(caller, image_id, changes, body)
        return Response({"metadata": body})


class ImageMetadataItemView(ComputeAPIView):
    max_version = MAX_METADATA_PROXY_VERSION

    def get(self, request: ComputeRequest, image_id: str, key: str) -> Response:
        properties = _properties(caller_of(request), image_id)
        if key not in properties:
            raise ApiError(404, "The resource could not be found.")
        return Response({"meta": {key: properties[key]}})

    def put(self, request: ComputeRequest, image_id: str, key: str) -> Response:
        meta = validate(self.body(request), METADATA_ITEM_BODY)["meta"]
        if key not in meta:
            raise ApiError(400, "Request body and URI mismatch")
        caller = caller_of(request)
        properties = {**_properties(caller, image_id), key: meta[key]}
        _save(caller, image_id, [services.Change("add", key, meta[key])], properties)
        return Response({"meta": meta})

    def delete(self, request: ComputeRequest, image_id: str, key: str) -> Response:
        caller = caller_of(request)
        properties = _properties(caller, image_id)
        if key not in properties:
            raise ApiError(404, "Invalid metadata key")
        del properties[key]
        _save(caller, image_id, [services.Change("remove", key)], properties)
        return Response(status=204)
