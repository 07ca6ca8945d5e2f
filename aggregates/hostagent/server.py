"""The agent's HTTP server (stdlib ``ThreadingHTTPServer``) and its loop.

Routes (JSON; all but ``/healthz`` need ``Authorization: Bearer <secret>``,
the agent's secret, which it registers with Corral at start):

- ``GET /healthz``: ``{"host", "status": "ok", "peak_rss_kb"}``.
- ``GET /cache``: ``{"images": [{"id", "size", "os_hash_algo", "os_hash_value", "cached_at",
  "last_used_at", "pinned"}]}``.
- ``POST /cache`` ``{"images": [{"id": "<uuid>", "pinned": true}, ...]}``
  (``pinned`` optional: the image is added to the pinned set): **202**
  ``{"request": {"id", "status": "running", "results": []}}``; the images are
  cached one after the other in a thread of their own.
- ``PUT /cache/pins`` ``{"images": ["<uuid>", ...]}``: the whole set of
  pinned images (never evicted; every other image may be, least recently
  used first, once the cache is past ``--cache-limit``); **200**
  ``{"pinned": [...], "evicted": [...]}``.
- ``GET /cache/requests/<id>``: ``{"request": {"id", "status": "running"|"done",
  "results": [{"id", "status": "cached"|"existing"|"error", "detail", "bytes"}]}}``.

Corral submits and then polls with short timeouts, so neither side holds a
connection open for a long download and a silent agent is noticed quickly."""

import hmac
import json
import logging
import threading
import uuid
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .cache import CacheError, ImageCache, valid_image_id
from .client import CorralClient, CorralError

log = logging.getLogger("corral.hostagent")

MAX_REQUEST_BODY = 1024 * 1024
KEPT_REQUESTS = 200


def peak_rss_kb() -> int:
    """This process's peak resident set size (VmHWM), in KiB; 0 where /proc is missing."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class HostAgent:
    def __init__(
        self,
        *,
        host: str,
        cache: ImageCache,
        corral: CorralClient,
        secret: str,
        registration: dict[str, Any],
        heartbeat_interval: float = 10.0,
    ):
        self.host = host
        self.cache = cache
        self.corral = corral
        self.secret = secret
        self.registration = registration
        self.heartbeat_interval = heartbeat_interval
        self.requests: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.requests_guard = threading.Lock()
        self.stopping = threading.Event()

    # --- registration and heartbeat --------------------------------------------------

    def register(self) -> dict[str, Any]:
        return self.corral.register(self.registration)

    def heartbeat_loop(self) -> None:
        """Re-register every ``heartbeat_interval`` seconds: Corral counts each
        registration as a heartbeat. A failure is logged and retried next time."""
        while not self.stopping.wait(self.heartbeat_interval):
            try:
                self.register()
            except CorralError as exc:
                log.warning("Heartbeat failed: %s", exc)

    # --- caching -----------------------------------------------------------------------

    def cache_image(self, image_id: str) -> dict[str, Any]:
        result: dict[str, Any] = {"id": image_id, "status": "error", "detail": None, "bytes": 0}
        try:
            with self.cache.lock(image_id):
                image = self.corral.image(image_id)
                if image.get("status") != "active":
                    raise CacheError(f"Image {image_id} is {image.get('status')}, not active")
                algo = image.get("os_hash_algo") or "sha512"
                expected = image.get("os_hash_value")
                if not expected:
                    raise CacheError(f"Image {image_id} has no os_hash_value to check a download against")
                if self.cache.holds(image_id, algo, expected):
                    self.cache.touch(image_id)
                    result["status"] = "existing"
                    return result
                result["bytes"] = self.cache.store(image_id, self.corral.image_chunks(image_id), algo, expected)
                result["status"] = "cached"
            self.evict(keep=[image_id])
        except (CacheError, CorralError, OSError) as exc:
            result["detail"] = str(exc)
            log.warning("Caching image %s failed: %s", image_id, exc)
        except Exception as exc:  # noqa: BLE001 - one image's failure must not end the request
            result["detail"] = f"Unexpected error: {exc}"
            log.exception("Caching image %s failed", image_id)
        return result

    def evict(self, keep: list[str] | None = None) -> list[str]:
        evicted = self.cache.evict(keep or [])
        if evicted:
            log.info("Evicted %d image(s) past the cache limit: %s", len(evicted), ", ".join(evicted))
        return evicted

    def set_pins(self, image_ids: list[str]) -> dict[str, Any]:
        self.cache.set_pins(image_ids)
        return {"pinned": sorted(self.cache.pins()), "evicted": self.evict()}

    def submit(self, image_ids: list[str], pinned: list[str] | None = None) -> dict[str, Any]:
        if pinned:
            self.cache.add_pins(pinned)
        request: dict[str, Any] = {"id": str(uuid.uuid4()), "status": "running", "images": image_ids, "results": []}
        with self.requests_guard:
            self.requests[request["id"]] = request
            while len(self.requests) > KEPT_REQUESTS:
                self.requests.popitem(last=False)
        threading.Thread(target=self._run, args=(request,), daemon=True, name=f"cache-{request['id']}").start()
        return self.view(request)

    def _run(self, request: dict[str, Any]) -> None:
        for image_id in request["images"]:
            result = self.cache_image(image_id)
            with self.requests_guard:
                request["results"].append(result)
        with self.requests_guard:
            request["status"] = "done"

    def view(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.requests_guard:
            return {"id": request["id"], "status": request["status"], "results": list(request["results"])}

    def find(self, request_id: str) -> dict[str, Any] | None:
        with self.requests_guard:
            request = self.requests.get(request_id)
        return self.view(request) if request else None

    # --- serving -----------------------------------------------------------------------

    def make_server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        agent = self

        class Handler(AgentHandler):
            pass

        Handler.agent = agent
        server = ThreadingHTTPServer(address, Handler)
        server.daemon_threads = True
        return server

    def serve(self, server: ThreadingHTTPServer) -> None:
        """Heartbeat in a thread and answer requests until interrupted."""
        heartbeat = threading.Thread(target=self.heartbeat_loop, daemon=True, name="heartbeat")
        heartbeat.start()
        try:
            server.serve_forever(poll_interval=0.5)
        finally:
            self.stopping.set()
            server.server_close()


class AgentHandler(BaseHTTPRequestHandler):
    agent: HostAgent
    server_version = "CorralHostAgent/1.0"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.info("%s %s", self.address_string(), format % args)

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": {"code": status, "message": message}})

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() == "bearer" and given and hmac.compare_digest(given.strip(), self.agent.secret):
            return True
        self._error(401, "The request needs the agent's secret: Authorization: Bearer <secret>.")
        return False

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/healthz":
            return self._send(200, {"host": self.agent.host, "status": "ok", "peak_rss_kb": peak_rss_kb()})
        if not self._authorized():
            return None
        if path == "/cache":
            return self._send(200, {"host": self.agent.host, "images": self.agent.cache.listing()})
        if path.startswith("/cache/requests/"):
            request = self.agent.find(path.rsplit("/", 1)[1])
            if request is None:
                return self._error(404, "No such cache request.")
            return self._send(200, {"request": request})
        return self._error(404, "Not found.")

    def _body(self, path: str, route: str) -> tuple[bool, Any]:
        """(True, the JSON body) of a request to ``route``; (False, None) once an error is sent."""
        length = self.headers.get("Content-Length", "")
        if not length.isdigit() or int(length) > MAX_REQUEST_BODY:
            # Read nothing: the connection closes after the answer.
            self.close_connection = True
            self._error(400 if not length.isdigit() else 413, "A body with a Content-Length is required.")
            return False, None
        body = self.rfile.read(int(length))
        if not self._authorized():
            return False, None
        if path != route:
            self._error(404, "Not found.")
            return False, None
        try:
            return True, json.loads(body)
        except ValueError:
            self._error(400, "The body is not JSON.")
            return False, None

    def _ids_error(self, ids: list[str]) -> str:
        bad = [image_id for image_id in ids if not valid_image_id(image_id)]
        if bad:
            return f"Invalid image id {bad[0]!r}: a UUID is expected."
        if len(set(ids)) != len(ids):
            return "Duplicate images in request."
        return ""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        read, payload = self._body(self.path.split("?", 1)[0].rstrip("/"), "/cache")
        if not read:
            return None
        images = payload.get("images") if isinstance(payload, dict) else None
        if (
            not isinstance(images, list)
            or not images
            or not all(
                isinstance(item, dict)
                and "id" in item
                and set(item) <= {"id", "pinned"}
                and isinstance(item.get("pinned", False), bool)
                for item in images
            )
        ):
            return self._error(
                400,
                'The body must be {"images": [{"id": "<image uuid>", "pinned": true|false}, ...]} '
                "with one image at least (pinned optional).",
            )
        ids = [str(item["id"]).lower() for item in images]
        problem = self._ids_error(ids)
        if problem:
            return self._error(400, problem)
        pinned = [image_id for image_id, item in zip(ids, images, strict=True) if item.get("pinned")]
        return self._send(202, {"request": self.agent.submit(ids, pinned)})

    def do_PUT(self) -> None:  # noqa: N802 - http.server's naming
        read, payload = self._body(self.path.split("?", 1)[0].rstrip("/"), "/cache/pins")
        if not read:
            return None
        images = payload.get("images") if isinstance(payload, dict) and set(payload) == {"images"} else None
        if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
            return self._error(400, 'The body must be {"images": ["<image uuid>", ...]} (the whole pinned set).')
        ids = [image_id.lower() for image_id in images]
        problem = self._ids_error(ids)
        if problem:
            return self._error(400, problem)
        return self._send(200, self.agent.set_pins(ids))
