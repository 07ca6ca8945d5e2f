"""Image API views: parse the request, call one service function, render
Glance's answer. Plain Django views (not DRF): the upload must reach the
service as a stream, untouched by any parser."""

import logging
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NoReturn, cast
from urllib.parse import urlencode

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict, StreamingHttpResponse, UnreadablePostError
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from jsonschema import Draft4Validator

from aggregates.compute_api.auth import noauth2_caller
from aggregates.errors import ServiceError
from aggregates.identity import keystone
from aggregates.identity.caller import Caller
from aggregates.images import activation, members, schemas, serializers, services, storage
from config import json_bodies, request_context
from config.policy import TokenCheckUnavailable
from config.public_url import public_base

from . import schema_documents
from .errors import GlanceError, error_response, unauthorized_response

log = logging.getLogger(__name__)

JSON_CONTENT_TYPE = "application/json; charset=UTF-8"

# A handler of one method of a resource: (request, caller, the path's values) -> the response.
Handler = Callable[..., HttpResponseBase]


def _caller(request: HttpRequest) -> Caller | None:
    token = request.headers.get("X-Auth-Token")
    if not token:
        return None
    request_id = getattr(request, "request_id", "")
    if settings.AUTH_STRATEGY == "noauth2":
        caller: Caller | None = noauth2_caller(token, request_id)
    else:
        try:
            caller = keystone.check_token(token, request_id, request.headers.get("X-Service-Token"))
        except TokenCheckUnavailable:
            raise GlanceError(503, "The identity service is unavailable: the token could not be checked.")
    if caller is not None:
        request_context.update(user=caller.username, project=caller.project_id)
    return caller


def glance_view(methods: Mapping[str, Handler], name: str) -> Callable[..., HttpResponseBase]:
    """A view routing by method (405 with Allow for the others) once the
    token is checked (401 first, as keystonemiddleware answers before Glance),
    rendering every refusal in Glance's format: nothing escapes as a bare 500."""

    @csrf_exempt
    def view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        try:
            problem = json_bodies.problem_of(request)
            if problem:
                raise GlanceError(400, problem)
            caller = _caller(request)
            if caller is None:
                return unauthorized_response(request)
            handler = methods.get(request.method or "")
            if handler is None:
                allowed = ", ".join(sorted(methods))
                raise GlanceError(
                    405, f"The method {request.method} is not allowed for this resource.", {"Allow": allowed}
                )
            return handler(request, caller, *args, **kwargs)
        except GlanceError as exc:
            return error_response(request, exc.status, exc.message, exc.headers)
        except ServiceError as exc:
            return error_response(request, exc.status, exc.message)
        except RequestDataTooBig:
            return error_response(request, 413, "The request body is too large.")
        except UnreadablePostError:
            return error_response(request, 400, "The request body could not be read.")
        except Exception:
            log.exception("Unexpected image API error (request %s)", getattr(request, "request_id", None) or "-")
            return error_response(
                request, 500, "The server has either erred or is incapable of performing the requested operation."
            )

    view.__name__ = view.__qualname__ = name
    return view


def _json(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> JsonResponse:
    response = JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})
    response.headers["Content-Type"] = JSON_CONTENT_TYPE
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def _no_content() -> HttpResponse:
    response = HttpResponse(status=204)
    del response.headers["Content-Type"]
    return response


def _media_type(request: HttpRequest) -> str:
    return request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()


def _json_body(request: HttpRequest) -> object:
    raw = request.body
    if not raw:
        raise GlanceError(400, "Body expected in request.")
    try:
        return json_bodies.loads(raw)
    except json_bodies.BodyRefused as exc:
        raise GlanceError(400, exc.message) from None
    except (ValueError, UnicodeDecodeError):
        raise GlanceError(400, "Malformed JSON in request body.")


# --- list ----------------------------------------------------------------------


def _value(params: QueryDict, key: str) -> str:
    """The (last) value of a parameter the query string holds."""
    return cast(str, params[key])  # a list only for a key without values, which a parsed query never has


def _sort_of(params: QueryDict) -> list[tuple[str, str]]:
    if "sort" in params and ("sort_key" in params or "sort_dir" in params):
        raise GlanceError(400, "The `sort` parameter is not compatible with `sort_key` and `sort_dir`.")
    if "sort" in params:
        sort = []
        for item in _value(params, "sort").split(","):
            key, _, direction = item.strip().partition(":")
            if not key or ":" in direction:
                raise GlanceError(400, f"Invalid sort value: {params['sort']}")
            sort.append((key.strip(), direction.strip() or "desc"))
        return sort
    keys = params.getlist("sort_key")
    directions = params.getlist("sort_dir")
    if len(directions) > 1 and len(directions) != len(keys):
        raise GlanceError(400, "Number of sort dirs does not match the number of sort keys")
    if not keys:
        return [("created_at", directions[0])] if directions else []
    if len(directions) <= 1:
        directions = [directions[0] if directions else "desc"] * len(keys)
    return list(zip(keys, directions, strict=True))


def _query_of(params: QueryDict) -> services.ImageQuery:
    query = services.ImageQuery(sort=_sort_of(params), tags=params.getlist("tag"), marker=params.get("marker"))
    if "limit" in params:
        try:
            query.limit = int(_value(params, "limit"))
        except ValueError:
            raise GlanceError(400, "limit param must be an integer")
        if query.limit < 0:
            raise GlanceError(400, "limit param must be positive")
    for key in params:
        if key in schemas.LIST_CONTROLS or key == "tag":
            continue
        value = _value(params, key)
        if key in ("created_at", "updated_at"):
            raise GlanceError(400, f"Filtering on {key} is not supported.")
        if key in schemas.CORE_FILTERS:
            query.filters[key] = value
        else:
            query.properties[key] = value
    return query


def _list_link(params: QueryDict, marker: str | None = None) -> str:
    items = [(key, value) for key, values in params.lists() for value in values if key != "marker"]
    if marker:
        items.append(("marker", marker))
    return "/v2/images" + (f"?{urlencode(items)}" if items else "")


def list_images(request: HttpRequest, caller: Caller) -> JsonResponse:
    query = _query_of(request.GET)
    images, more = services.list_images(caller, query)
    next_link = _list_link(request.GET, str(images[-1].id)) if more and images else None
    return _json(serializers.images_body(images, _list_link(request.GET), next_link))


def create_image(request: HttpRequest, caller: Caller) -> JsonResponse:
    body = _json_body(request)
    if not Draft4Validator(schemas.CREATE_BODY).is_valid(body):
        raise GlanceError(400, f"Provided object does not match schema 'image': {body!r} is not of type 'object'")
    image = services.create_image(caller, cast(dict[str, Any], body))  # the schema checked it is an object
    location = f"{public_base(request)}/image/v2/images/{image.id}"
    return _json(serializers.image_body(image), status=201, headers={"Location": location})


# GET and POST /v2/images
images_view = glance_view({"GET": list_images, "POST": create_image}, "images_view")


# --- one image -----------------------------------------------------------------


def show_image(request: HttpRequest, caller: Caller, image_id: str) -> JsonResponse:
    return _json(serializers.image_body(services.get_image(caller, image_id)))


_POINTER_ESCAPE = re.compile(r"~(?![01])")


def _decode_path(path: object) -> str:
    """The attribute a JSON pointer names ("/hw_disk_bus" -> hw_disk_bus)."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise GlanceError(400, f'Pointer `{path}` does not start with "/".')
    if _POINTER_ESCAPE.search(path):
        raise GlanceError(400, f"Invalid JSON pointer for this resource: '{path}'")
    parts = path[1:].split("/")
    if len(parts) != 1:
        raise GlanceError(400, f"Invalid JSON pointer for this resource: '{path}'")
    return parts[0].replace("~1", "/").replace("~0", "~")


def _changes_of(request: HttpRequest) -> list[services.Change]:
    media_type = _media_type(request)
    if media_type not in schemas.PATCH_MEDIA_TYPES:
        raise GlanceError(415, "Unsupported Content-Type", {"Accept-Patch": ", ".join(schemas.PATCH_MEDIA_TYPES)})
    body = _json_body(request)
    if not isinstance(body, list):
        raise GlanceError(400, "Request body must be a JSON array of operation objects.")
    changes = []
    for raw in body:
        if not isinstance(raw, dict):
            raise GlanceError(400, "Operations must be JSON objects.")
        if media_type == schemas.PATCH_V21:
            errors = list(Draft4Validator(schemas.PATCH_V21_OPERATION).iter_errors(raw))
            if errors:
                missing = next((e.validator_value for e in errors if e.validator == "required"), None)
                if missing:
                    absent = next(key for key in missing if key not in raw)
                    raise GlanceError(400, f"Unable to find '{absent}' in JSON Schema change")
                raise GlanceError(400, "Operation objects must contain a string 'op' and a string 'path'.")
            op, path = raw["op"], raw["path"]
        else:
            ops = [key for key in schemas.PATCH_OPS if key in raw]
            if len(ops) != 1:
                raise GlanceError(
                    400, f"Operation objects must contain exactly one member named {', '.join(schemas.PATCH_OPS)}"
                )
            op, path = ops[0], raw[ops[0]]
        if op not in schemas.PATCH_OPS:
            raise GlanceError(
                400, f"Invalid operation: `{op}`. It must be one of the following: {', '.join(schemas.PATCH_OPS)}."
            )
        if op != "remove" and "value" not in raw:
            raise GlanceError(400, "Unable to find 'value' in JSON Schema change")
        changes.append(services.Change(op=op, name=_decode_path(path), value=raw.get("value")))
    return changes


def update_image(request: HttpRequest, caller: Caller, image_id: str) -> JsonResponse:
    changes = _changes_of(request)
    return _json(serializers.image_body(services.update_image(caller, image_id, changes)))


def delete_image(request: HttpRequest, caller: Caller, image_id: str) -> HttpResponse:
    services.delete_image(caller, image_id)
    return _no_content()


# GET, PATCH and DELETE /v2/images/{id}
image_view = glance_view({"GET": show_image, "PATCH": update_image, "DELETE": delete_image}, "image_view")


def put_tag(request: HttpRequest, caller: Caller, image_id: str, tag: str) -> HttpResponse:
    services.add_tag(caller, image_id, tag)
    return _no_content()


def remove_tag(request: HttpRequest, caller: Caller, image_id: str, tag: str) -> HttpResponse:
    services.delete_tag(caller, image_id, tag)
    return _no_content()


# PUT and DELETE /v2/images/{id}/tags/{tag}
image_tag_view = glance_view({"PUT": put_tag, "DELETE": remove_tag}, "image_tag_view")


# --- data ----------------------------------------------------------------------


def _declared_size(request: HttpRequest) -> int | None:
    """The body's length from Content-Length, else X-OpenStack-Image-Size; None if neither."""
    sizes = []
    for header in ("Content-Length", "X-OpenStack-Image-Size"):
        value = request.headers.get(header)
        if value not in (None, ""):
            if not value.strip().isdigit():
                raise GlanceError(400, f"Invalid {header} header: {value}")
            sizes.append(int(value))
    return sizes[0] if sizes else None


def body_chunks(request: HttpRequest) -> Iterator[bytes]:
    """The request body, streamed: Content-Length bytes, or with a chunked
    body (no Content-Length) all of the input stream. Served through
    config.wsgi, a chunked body arrives with its length already
    (config/chunked.py reads it whole, or it was refused with 411)."""
    content_length = request.headers.get("Content-Length")
    if content_length in (None, "") and "chunked" in request.headers.get("Transfer-Encoding", "").lower():
        return storage.chunks_of(request.META["wsgi.input"].read, None)
    return storage.chunks_of(request.read, int(content_length or 0))


def upload_data(request: HttpRequest, caller: Caller, image_id: str) -> HttpResponse:
    media_type = _media_type(request)
    if media_type != "application/octet-stream":
        raise GlanceError(415, f"Invalid content type {media_type or '(none)'}")
    declared = _declared_size(request)
    services.upload_image_data(caller, image_id, body_chunks(request), expected_size=declared)
    return _no_content()


_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.I)


def _range_of(request: HttpRequest, size: int) -> tuple[int, int] | None:
    """(start, end inclusive) of a satisfiable single ``Range``; None for no
    (or an unparsable, as webob ignores it) Range; 416 for one past the end."""
    header = request.headers.get("Range")
    if not header:
        return None
    match = _RANGE.match(header)
    if not match or (not match.group(1) and not match.group(2)):
        return None
    first, last = match.group(1), match.group(2)
    if first:
        start = int(first)
        end = min(int(last), size - 1) if last else size - 1
        if last and int(last) < start:
            return None
    else:
        suffix = int(last)
        start, end = max(size - suffix, 0), size - 1
        if suffix == 0:
            start = size
    if start >= size or end < start:
        raise GlanceError(416, "Requested range not satisfiable", {"Content-Range": f"bytes */{size}"})
    return start, end


def download_data(request: HttpRequest, caller: Caller, image_id: str) -> HttpResponseBase:
    image, handle = services.image_data(caller, image_id)
    if handle is None:
        return _no_content()
    size = image.size or 0
    try:
        wanted = _range_of(request, size)
    except GlanceError:
        handle.close()
        raise
    if wanted is None:
        response = StreamingHttpResponse(storage.read_range(handle, 0, size), content_type="application/octet-stream")
        response.headers["Content-Length"] = str(size)
        if image.checksum:
            response.headers["Content-MD5"] = image.checksum
        return response
    start, end = wanted
    response = StreamingHttpResponse(
        storage.read_range(handle, start, end - start + 1), status=206, content_type="application/octet-stream"
    )
    response.headers["Content-Length"] = str(end - start + 1)
    response.headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    return response


# GET and PUT /v2/images/{id}/file
image_file_view = glance_view({"GET": download_data, "PUT": upload_data}, "image_file_view")


# --- members -------------------------------------------------------------------


def _member_of(body: object) -> object:
    """The project of an add-member body, as Glance's deserializer reads it."""
    if not isinstance(body, dict):
        raise GlanceError(400, 'Expected a member in the form: {"member": "image_id"}')
    if "member" not in body:
        raise GlanceError(400, "Member to be added not specified")
    return body["member"]


def _status_of(body: object) -> object:
    if not isinstance(body, dict):
        raise GlanceError(400, 'Expected a status in the form: {"status": "status"}')
    if "status" not in body:
        raise GlanceError(400, "Status not specified")
    return body["status"]


def list_members(request: HttpRequest, caller: Caller, image_id: str) -> JsonResponse:
    return _json(serializers.members_body(members.list_members(caller, image_id)))


def add_member(request: HttpRequest, caller: Caller, image_id: str) -> JsonResponse:
    member = members.add_member(caller, image_id, _member_of(_json_body(request)))
    return _json(serializers.member_body(member))


def show_member(request: HttpRequest, caller: Caller, image_id: str, member_id: str) -> JsonResponse:
    return _json(serializers.member_body(members.get_member(caller, image_id, member_id)))


def update_member(request: HttpRequest, caller: Caller, image_id: str, member_id: str) -> JsonResponse:
    status = _status_of(_json_body(request))
    return _json(serializers.member_body(members.update_member(caller, image_id, member_id, status)))


def remove_member(request: HttpRequest, caller: Caller, image_id: str, member_id: str) -> HttpResponse:
    members.remove_member(caller, image_id, member_id)
    return _no_content()


# GET and POST /v2/images/{id}/members
image_members_view = glance_view({"GET": list_members, "POST": add_member}, "image_members_view")
# GET, PUT and DELETE /v2/images/{id}/members/{member_id}
image_member_view = glance_view(
    {"GET": show_member, "PUT": update_member, "DELETE": remove_member}, "image_member_view"
)


# --- actions -------------------------------------------------------------------


def deactivate(request: HttpRequest, caller: Caller, image_id: str) -> HttpResponse:
    activation.deactivate_image(caller, image_id)
    return _no_content()


def reactivate(request: HttpRequest, caller: Caller, image_id: str) -> HttpResponse:
    activation.reactivate_image(caller, image_id)
    return _no_content()


# POST /v2/images/{id}/actions/deactivate and /reactivate
deactivate_view = glance_view({"POST": deactivate}, "deactivate_view")
reactivate_view = glance_view({"POST": reactivate}, "reactivate_view")


# --- schemas -------------------------------------------------------------------


def show_schema(request: HttpRequest, caller: Caller, name: str) -> JsonResponse:
    return _json(schema_documents.DOCUMENTS[name]())


# GET /v2/schemas/{image,images,member,members}
schema_view = glance_view({"GET": show_schema}, "schema_view")


def _not_found(request: HttpRequest, caller: Caller, *args: Any, **kwargs: Any) -> NoReturn:
    raise GlanceError(404, "The resource could not be found.")


# Any other path under /v2/
not_found_view = glance_view(
    {method: _not_found for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")}, "not_found_view"
)
