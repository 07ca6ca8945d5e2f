"""The base of every compute API view: versioning, token auth, Nova faults."""

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import IO, Any, NoReturn, cast

from rest_framework import exceptions as drf
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config import json_bodies

from .auth import TokenAuthentication, caller_of
from .errors import ApiError, BodyNotAccepted, compute_exception_handler
from .microversions import APIVersion, ComputeVersioning, version_headers


class AnyAcceptHeader(DefaultContentNegotiation):
    """Nova answers JSON whatever the Accept header says; openstacksdk sends
    some requests (``flavor create --project``) with an empty one."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


class SafeJSONParser(JSONParser):
    """JSON bodies through config.json_bodies: no deep nesting, NaN,
    Infinity, out-of-range integers, NUL or lone surrogates (400 saying why).
    Malformed JSON stays DRF's ParseError. Also used by the identity API."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:  # any JSON value: the handlers check its shape
        try:
            return json_bodies.loads(stream.read())
        except json_bodies.BodyRefused as exc:
            raise BodyNotAccepted(exc.message) from None
        except ValueError as exc:
            raise drf.ParseError(f"JSON parse error - {json_bodies.escape(exc, 200)}") from None


class ComputeAPIView(APIView):
    content_negotiation_class = AnyAcceptHeader
    authentication_classes = [TokenAuthentication]
    permission_classes = []
    versioning_class = ComputeVersioning
    parser_classes = [SafeJSONParser]
    renderer_classes = [JSONRenderer]
    # Routes that exist only in a range of microversions set these.
    min_version: APIVersion | tuple[int, int] | None = None
    max_version: APIVersion | tuple[int, int] | None = None

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Response]:
        return compute_exception_handler

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        problem = json_bodies.problem_of(request)
        if problem:
            raise ApiError(400, problem)
        super().initial(request, *args, **kwargs)
        caller_of(request)  # every compute route needs a token
        version = cast(APIVersion, request.version)  # ComputeVersioning set it
        if (self.min_version and version < self.min_version) or (self.max_version and version > self.max_version):
            raise ApiError(404, "The resource could not be found.")

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        version = getattr(request, "version", None)
        if isinstance(version, APIVersion):
            for name, value in version_headers(version).items():
                response.headers[name] = value
        return response

    def body(self, request: Request) -> Any:
        """The parsed JSON body ({} when there is none)."""
        data = request.data
        return {} if data is None else data


class UnknownRouteView(ComputeAPIView):
    """Any other path under /compute/v2.1/: a Nova-style 404 (the routes
    table, config.compute_urls, puts it last)."""

    def _not_found(self, request: Request, *args: Any, **kwargs: Any) -> NoReturn:
        raise ApiError(404, "The resource could not be found.")

    get = post = put = delete = patch = _not_found


def isotime(value: datetime | None) -> str | None:
    """Nova's timestamp format: microseconds, no zone suffix."""
    if value is None:
        return None
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds")
