"""Request ids, as OpenStack services hand them out, and the last line of
defence of the APIs: a server error Django itself renders (an HTML "Server
Error (500)") becomes a JSON body in the format of the API that was called."""

import json
import logging
import uuid

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpResponse, HttpResponseBadRequest

from config import json_bodies

log = logging.getLogger(__name__)

GENERIC = "An unexpected error occurred; the request id identifies it in the service's log."


def new_request_id():
    return f"req-{uuid.uuid4()}"


def _api_of(path):
    if settings.CORRAL_SERVICE == "placement" or path.startswith("/placement"):
        return "placement"
    for prefix in ("compute", "identity", "image"):
        if path == f"/{prefix}" or path.startswith(f"/{prefix}/"):
            return prefix
    return None


def _error_body(api, status, request_id):
    if api == "compute":
        return {"computeFault": {"code": status, "message": GENERIC}}
    if api == "identity":
        return {"error": {"code": status, "title": "Internal Server Error", "message": GENERIC}}
    if api == "image":
        return {"message": f"{GENERIC}<br /><br />\n\n\n", "code": f"{status} Internal Server Error", "title": "Error"}
    return {
        "errors": [{"status": status, "title": "Internal Server Error", "detail": GENERIC, "request_id": request_id}]
    }


class RequestIdMiddleware:
    """Gives every request ``request.request_id`` and echoes it in the
    ``X-OpenStack-Request-ID`` (and, for compute, ``X-Compute-Request-ID``) headers.
    A console form post holding NUL is refused (400). A non-JSON 5xx answer on an API path (Django's own error page) is
    replaced by a generic JSON error in that API's format."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.request_id = new_request_id()
        response = self._refused_form(request) or self.get_response(request)
        if response.status_code >= 500:
            response = self._api_error(request, response)
        response.headers.setdefault("X-OpenStack-Request-ID", request.request_id)
        if request.path.startswith("/compute"):
            response.headers.setdefault("X-Compute-Request-ID", request.request_id)
        return response

    @staticmethod
    def _refused_form(request):
        """A console form post with NUL or invalid Unicode in a value: 400
        before any view looks a value up (PostgreSQL cannot store NUL)."""
        if request.method != "POST" or _api_of(request.path) is not None:
            return None
        try:
            values = [(key, value) for key, values in request.POST.lists() for value in values]
        except (RequestDataTooBig, TooManyFieldsSent):
            # Once this failed, Django would hand the view an empty form: answer here.
            return HttpResponseBadRequest("Bad request: the form is too large.", content_type="text/plain")
        if any(json_bodies.text_problem(key) or json_bodies.text_problem(value) for key, value in values):
            return HttpResponseBadRequest(
                "Bad request: a form value contains a NUL character or invalid Unicode.", content_type="text/plain"
            )
        return None

    @staticmethod
    def _api_error(request, response):
        api = _api_of(request.path)
        if api is None or "json" in response.get("Content-Type", "") or getattr(response, "streaming", False):
            return response
        log.error(
            "%s API: server error %s rendered by Django (request %s)", api, response.status_code, request.request_id
        )
        body = json.dumps(_error_body(api, response.status_code, request.request_id))
        return HttpResponse(body, status=response.status_code, content_type="application/json")
