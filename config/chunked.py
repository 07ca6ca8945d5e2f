"""Chunked request bodies, for every API and the console: read whole, or
refused, never taken as empty.

Django reads a request body by its ``Content-Length``; a chunked request
(``Transfer-Encoding: chunked``) has none, so Django would read its body as
empty: a JSON body refused as missing, an image upload stored as 0 bytes.
``WholeBodies`` wraps the WSGI application every server Corral ships
serves (``config.wsgi``: gunicorn, serve_demo's too, and ``manage.py runserver``):

- When the server de-chunked the input and ends it with the body
  (``wsgi.input_terminated``, which gunicorn sets), the body is read to its
  end, spooled to a temporary file past ``FILE_UPLOAD_MAX_MEMORY_SIZE``,
  and handed on as a body with its ``Content-Length``. Reading stops past
  the limit the APIs apply (``IMAGE_MAX_BYTES`` for
  ``application/octet-stream`` data, else ``DATA_UPLOAD_MAX_MEMORY_SIZE``):
  the request then goes on with a ``Content-Length`` over that limit and no
  body, so the called API answers its own 413 before reading anything.
- When the server cannot (Django's development server hands on the raw
  stream with no end), the request is marked ``LENGTH_REQUIRED``: the
  request-id middleware answers 411 in the called API's format before any
  view runs. That answer goes without a ``Content-Length``, so the
  development server closes the connection instead of reading the chunks
  left unread as a next request.
"""

import io
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from django.conf import settings

if TYPE_CHECKING:
    from _typeshed import OptExcInfo

# The environ key marking a chunked body this server cannot read to its end.
LENGTH_REQUIRED = "corral.length_required"
READ_SIZE = 64 * 1024


def body_limit(environ: WSGIEnvironment) -> int:
    """The most bytes of a body the APIs take: image data up to
    IMAGE_MAX_BYTES, any other body up to DATA_UPLOAD_MAX_MEMORY_SIZE."""
    media_type = environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
    data_limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if media_type == "application/octet-stream" or data_limit is None:
        return int(settings.IMAGE_MAX_BYTES)
    return int(data_limit)


def read_whole(stream: IO[bytes], limit: int) -> tuple[IO[bytes], int]:
    """The body of ``stream`` up to its end, and its length; past ``limit``
    bytes, an empty body and a length of ``limit + 1``."""
    spool = tempfile.SpooledTemporaryFile(  # noqa: SIM115 - closed with the response (ClosingResult)
        max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE, dir=settings.FILE_UPLOAD_TEMP_DIR
    )
    size = 0
    while size <= limit:
        chunk = stream.read(min(READ_SIZE, limit + 1 - size))
        if not chunk:
            spool.seek(0)
            return spool, size
        size += len(chunk)
        spool.write(chunk)
    spool.close()
    return io.BytesIO(), size


class ClosingResult:
    """A response's iterable that also closes the spooled body when the
    server closes the response."""

    def __init__(self, result: Iterable[bytes], body: IO[bytes]) -> None:
        self.result, self.body = result, body

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.result)

    def close(self) -> None:
        try:
            close = getattr(self.result, "close", None)
            if close is not None:
                close()
        finally:
            self.body.close()


class WithoutContentLength:
    """A ``start_response`` that drops the response's Content-Length."""

    def __init__(self, start_response: StartResponse) -> None:
        self.start_response = start_response

    def __call__(
        self, status: str, headers: list[tuple[str, str]], exc_info: "OptExcInfo | None" = None, /
    ) -> Callable[[bytes], object]:
        kept = [(name, value) for name, value in headers if name.lower() != "content-length"]
        return self.start_response(status, kept, exc_info)


class WholeBodies:
    """The WSGI middleware described above."""

    def __init__(self, application: WSGIApplication) -> None:
        self.application = application

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if not environ.get("HTTP_TRANSFER_ENCODING", "").strip():
            return self.application(environ, start_response)
        if not environ.get("wsgi.input_terminated"):
            environ[LENGTH_REQUIRED] = True
            return self.application(environ, WithoutContentLength(start_response))
        body, size = read_whole(environ["wsgi.input"], body_limit(environ))
        environ["wsgi.input"] = body
        environ["CONTENT_LENGTH"] = str(size)
        del environ["HTTP_TRANSFER_ENCODING"]  # what follows sees a body with its length
        return ClosingResult(self.application(environ, start_response), body)
