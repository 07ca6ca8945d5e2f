"""``AgentDriver``: pre-caching through each host's agent (``manage.py run_host_agent``).

The agent's address is the ``agent_url`` its host registered; Corral
authenticates to it with the shared secret ``AGENT_SHARED_SECRET`` (setting,
else the environment variable of that name) as ``Authorization: Bearer``.
Corral submits the images (``POST /cache``, 202 with a request id) and polls
``GET /cache/requests/<id>``; every HTTP call has connect and read timeouts
and the whole host an overall deadline, so a silent or dead agent makes that
host ``error``, never a hang. The agent downloads the data itself from
Corral's image API and checks each image's ``os_hash_value``."""

import threading
import time
from collections.abc import Callable
from typing import Any

import requests
from django.conf import settings
from django.db import connection

from aggregates.hosts.models import ComputeNode
from aggregates.precache.drivers import (
    CACHED,
    ERROR,
    EXISTING,
    DriverUnavailable,
    HostTarget,
    ImageResult,
    ImageToCache,
)

CONNECT_TIMEOUT = 3.0
READ_TIMEOUT = 10.0
POLL_INTERVAL = 0.25
# Consecutive failed polls (connection refused, timeout, 5xx) before the host is given up.
MAX_POLL_FAILURES = 3


class AgentError(Exception):
    pass


def shared_secret() -> str:
    return str(settings.AGENT_SHARED_SECRET)


def agent_url_of(host: str) -> str:
    """The agent address ``host`` registered last ("" if none): a read, for
    targets that do not carry it. Called from a driver thread of the runner,
    it closes that thread's connection again (the thread has no other use
    for it)."""
    try:
        urls = (
            ComputeNode.objects.filter(host=host)
            .exclude(agent_url="")
            .order_by("-updated_at", "-id")
            .values_list("agent_url", flat=True)
        )
        return next(iter(urls), "")
    finally:
        if threading.current_thread() is not threading.main_thread() and not connection.in_atomic_block:
            connection.close()


class AgentDriver:
    def __init__(self, connect_timeout: float = CONNECT_TIMEOUT, read_timeout: float = READ_TIMEOUT):
        self.timeouts = (connect_timeout, read_timeout)

    def _endpoint(self, host: HostTarget) -> tuple[str, dict[str, str]]:
        secret = shared_secret()
        if not secret:
            raise DriverUnavailable("agent driver: the AGENT_SHARED_SECRET setting is empty")
        url = getattr(host, "agent_url", None) or agent_url_of(host.host)
        if not url:
            raise AgentError(f"host {host.host} registered no agent address (agent_url)")
        return url.rstrip("/"), {"Authorization": f"Bearer {secret}", "Accept": "application/json"}

    def _call(self, method: str, url: str, headers: dict[str, str], deadline: float, **kwargs: Any) -> Any:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AgentError("timed out")
        timeout = (min(self.timeouts[0], left), min(self.timeouts[1], left))
        try:
            response = requests.request(method, url, headers=headers, timeout=timeout, **kwargs)
        except requests.Timeout as exc:
            raise AgentError(f"agent did not answer in time ({method} {url})") from exc
        except requests.RequestException as exc:
            raise AgentError(f"agent unreachable ({method} {url}): {exc}") from exc
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            message = body.get("error", {}).get("message") if isinstance(body, dict) else response.text[:200]
            raise AgentError(f"agent refused ({response.status_code} on {method} {url}): {message}")
        return body

    def cache(
        self,
        host: HostTarget,
        images: list[ImageToCache],
        timeout: float,
        on_image_done: Callable[[ImageResult], None],
    ) -> list[ImageResult]:
        deadline = time.monotonic() + timeout
        started = time.monotonic()
        reported: dict[str, ImageResult] = {}

        def finish(error: str) -> list[ImageResult]:
            for image in images:
                if image.id not in reported:
                    result = ImageResult(image.id, ERROR, error, seconds=round(time.monotonic() - started, 3))
                    reported[image.id] = result
                    on_image_done(result)
            return [reported[image.id] for image in images]

        try:
            url, headers = self._endpoint(host)
            body = self._call(
                "POST",
                f"{url}/cache",
                headers,
                deadline,
                json={"images": [{"id": i.id, "pinned": True} if i.pinned else {"id": i.id} for i in images]},
            )
            request_id = body["request"]["id"]
        except AgentError as exc:
            return finish(str(exc))
        except (KeyError, TypeError):
            return finish("agent gave no request id")
        failures = 0
        while True:
            try:
                body = self._call("GET", f"{url}/cache/requests/{request_id}", headers, deadline)
                failures = 0
            except AgentError as exc:
                failures += 1
                if failures >= MAX_POLL_FAILURES or time.monotonic() >= deadline:
                    return finish(str(exc))
                time.sleep(POLL_INTERVAL)
                continue
            request = body.get("request", {}) if isinstance(body, dict) else {}
            for item in request.get("results", []):
                image_id = str(item.get("id"))
                if image_id in reported or image_id not in {i.id for i in images}:
                    continue
                status = item.get("status")
                if status not in (CACHED, EXISTING, ERROR):
                    status, item["detail"] = ERROR, f"agent answered an unknown status {status!r}"
                result = ImageResult(
                    image_id,
                    status,
                    item.get("detail") or "",
                    bytes=item.get("bytes"),
                    seconds=round(time.monotonic() - started, 3),
                )
                reported[image_id] = result
                on_image_done(result)
            if request.get("status") == "done" or len(reported) == len(images):
                return finish("the agent reported no result for this image")
            if time.monotonic() >= deadline:
                return finish("timed out")
            time.sleep(min(POLL_INTERVAL, max(deadline - time.monotonic(), 0)))

    def cached_images(self, host: HostTarget) -> list[str]:
        try:
            url, headers = self._endpoint(host)
            body = self._call("GET", f"{url}/cache", headers, time.monotonic() + sum(self.timeouts))
            return sorted(str(item["id"]) for item in body["images"])
        except (AgentError, KeyError, TypeError) as exc:
            raise DriverUnavailable(f"cache of host {host.host} unavailable: {exc}") from exc

    def set_pinned(self, host: HostTarget, image_ids: list[str]) -> None:
        """``PUT /cache/pins`` with the whole set of the host's pinned images."""
        try:
            url, headers = self._endpoint(host)
            self._call(
                "PUT", f"{url}/cache/pins", headers, time.monotonic() + sum(self.timeouts), json={"images": image_ids}
            )
        except AgentError as exc:
            raise DriverUnavailable(f"pins of host {host.host} not set: {exc}") from exc
