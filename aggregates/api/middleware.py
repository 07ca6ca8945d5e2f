"""Request ids, as OpenStack services hand them out."""
import uuid


def new_request_id():
    return f"req-{uuid.uuid4()}"


class RequestIdMiddleware:
    """Gives every request ``request.request_id`` and echoes it in the
    ``X-OpenStack-Request-ID`` (and, for compute, ``X-Compute-Request-ID``) headers."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.request_id = new_request_id()
        response = self.get_response(request)
        response.headers.setdefault("X-OpenStack-Request-ID", request.request_id)
        if request.path.startswith("/compute"):
            response.headers.setdefault("X-Compute-Request-ID", request.request_id)
        return response
