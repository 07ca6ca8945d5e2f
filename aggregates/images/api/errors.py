"""Glance's error bodies. Glance raises webob HTTP exceptions, which render
themselves by the request's Accept header: JSON
``{"message": ..., "code": "404 Not Found", "title": "Not Found"}`` when the
client accepts it best, else an HTML page (also when no Accept header is
sent), else plain text (e.g. for the empty ``Accept`` the SDK sends with
uploads). 401s come from keystonemiddleware, in Keystone's format."""

import html
import json
import re
from collections.abc import Mapping

from django.http import HttpRequest, HttpResponse

from config.json_bodies import escape
from config.public_url import keystone_uri

TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    409: "Conflict",
    410: "Gone",
    411: "Length Required",
    413: "Request Entity Too Large",
    415: "Unsupported Media Type",
    416: "Request Range Not Satisfiable",
    500: "Internal Server Error",
    503: "Service Unavailable",
}

HTML_PAGE = """\
<html>
 <head>
  <title>{status}</title>
 </head>
 <body>
  <h1>{status}</h1>
  {body}
 </body>
</html>"""


class GlanceError(Exception):
    """An HTTP error rendered as webob renders Glance's exceptions."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def _accepted(accept: str | None) -> str | None:
    """Which of webob's offers (text/html, application/json) the Accept header
    prefers; None when it accepts neither."""
    if accept is None:
        return "text/html"
    best: str | None = None
    best_q = 0.0
    for offer in ("text/html", "application/json"):
        q_offer = 0.0
        specificity = -1
        for part in accept.split(","):
            media, *params = [p.strip() for p in part.split(";")]
            if not media:
                continue
            q = 1.0
            for param in params:
                name, _, value = param.partition("=")
                if name.strip().lower() == "q":
                    try:
                        q = float(value)
                    except ValueError:
                        q = 0.0
            kind, _, sub = media.lower().partition("/")
            offer_kind, offer_sub = offer.split("/")
            if media == "*/*" or media == "*":
                level = 0
            elif kind == offer_kind and sub == "*":
                level = 1
            elif kind == offer_kind and sub == offer_sub:
                level = 2
            else:
                continue
            if level > specificity:
                specificity, q_offer = level, q
        if q_offer > best_q:
            best, best_q = offer, q_offer
    return best


def _strip_tags(value: str) -> str:
    value = value.replace("\n", " ").replace("\r", "")
    value = re.sub(r"<br\s*/?>", "\n", value, flags=re.I)
    return re.sub(r"<[^>]*>", "", value)


def error_response(
    request: HttpRequest, status: int, message: str, headers: Mapping[str, str] | None = None
) -> HttpResponse:
    title = TITLES.get(status, "Error")
    message = escape(message)  # it may echo user values: keep the body encodable
    status_line = f"{status} {title}"
    kind = _accepted(request.headers.get("Accept"))
    if kind == "application/json":
        body = f"{message}<br /><br />\n\n\n"
        content = json.dumps({"message": body, "code": status_line, "title": title})
        content_type = "application/json"
    elif kind == "text/html":
        content = HTML_PAGE.format(status=status_line, body=f"{html.escape(message)}<br /><br />\n\n\n")
        content_type = "text/html; charset=UTF-8"
    else:
        content = f"{status_line}\n\n{_strip_tags(f'{message}<br /><br />' + chr(10) * 3)}"
        content_type = "text/plain; charset=UTF-8"
    response = HttpResponse(content, status=status, content_type=content_type)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def unauthorized_response(request: HttpRequest) -> HttpResponse:
    """keystonemiddleware's 401, which answers before Glance does."""
    message = "The request you have made requires authentication."
    body = {"error": {"code": 401, "title": "Unauthorized", "message": message}}
    response = HttpResponse(json.dumps(body), status=401, content_type="application/json")
    response.headers["WWW-Authenticate"] = f'Keystone uri="{keystone_uri(request)}"'
    return response
