"""The agent's client of Corral: registration (the heartbeat too) through
the compute API and image data through the image API, with a token."""

from collections.abc import Iterator
from typing import Any

import requests

from .cache import CHUNK_SIZE

CONNECT_TIMEOUT = 5
READ_TIMEOUT = 60


class CorralError(Exception):
    """Corral refused (``status``: its HTTP status) or could not be reached
    (``status`` None); the message says why."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def _describe(response: requests.Response) -> str:
    text = response.text[:300].strip()
    return f"HTTP {response.status_code} from {response.request.method} {response.url}: {text}"


class CorralClient:
    def __init__(self, url: str, token: str, timeout: tuple[float, float] = (CONNECT_TIMEOUT, READ_TIMEOUT)):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": token, "Accept": "application/json"})

    def register(self, registration: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self.session.post(
                f"{self.url}/compute/v2.1/os-host-registrations",
                json={"registration": registration},
                timeout=self.timeout,
            )
        except requests.RequestException as exc:
            raise CorralError(f"Registration failed: {exc}") from exc
        if response.status_code not in (200, 201):
            raise CorralError(f"Registration refused: {_describe(response)}", response.status_code)
        return response.json()["registration"]

    def image(self, image_id: str) -> dict[str, Any]:
        try:
            response = self.session.get(f"{self.url}/image/v2/images/{image_id}", timeout=self.timeout)
        except requests.RequestException as exc:
            raise CorralError(f"Image {image_id} could not be read: {exc}") from exc
        if response.status_code != 200:
            raise CorralError(f"Image {image_id} could not be read: {_describe(response)}")
        return response.json()

    def image_chunks(self, image_id: str) -> Iterator[bytes]:
        """The image's data, streamed in chunks (never all in memory)."""
        try:
            response = self.session.get(
                f"{self.url}/image/v2/images/{image_id}/file", stream=True, timeout=self.timeout
            )
        except requests.RequestException as exc:
            raise CorralError(f"Image {image_id} could not be downloaded: {exc}") from exc
        with response:
            if response.status_code != 200:
                raise CorralError(f"Image {image_id} could not be downloaded: {_describe(response)}")
            try:
                yield from response.iter_content(CHUNK_SIZE)
            except requests.RequestException as exc:
                raise CorralError(f"Download of image {image_id} was cut: {exc}") from exc
