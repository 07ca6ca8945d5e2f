"""The agent's client of Corral: registration (the heartbeat too) through
the compute API and image data through the image API, with a token: a
fixed one, or those of a Keystone user (``keystone_tokens``: an external
Keystone's, issued and renewed by a keystoneauth1 session; a 401 asks for
a new one, once)."""

import os
from collections.abc import Callable, Iterator
from typing import Any

import requests
from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

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


# A token provider: (renew=False) -> the token to send.
TokenProvider = Callable[..., str]


def keystone_tokens(environ: dict[str, str] | None = None) -> TokenProvider | None:
    """The tokens of the Keystone user the standard OS_* variables name
    (OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME,
    OS_USER_DOMAIN_NAME, OS_PROJECT_DOMAIN_NAME), or None without OS_AUTH_URL."""
    env = os.environ if environ is None else environ
    if not env.get("OS_AUTH_URL"):
        return None
    auth = v3.Password(
        auth_url=env["OS_AUTH_URL"],
        username=env.get("OS_USERNAME", ""),
        password=env.get("OS_PASSWORD", ""),
        project_name=env.get("OS_PROJECT_NAME", ""),
        user_domain_name=env.get("OS_USER_DOMAIN_NAME", "Default"),
        project_domain_name=env.get("OS_PROJECT_DOMAIN_NAME", "Default"),
    )
    keystone = ks_session.Session(auth=auth, timeout=CONNECT_TIMEOUT * 2)

    def provider(renew: bool = False) -> str:
        if renew:
            auth.invalidate()
        try:
            token = keystone.get_token()
        except ks_exceptions.ClientException as exc:
            raise CorralError(f"Keystone issued no token: {exc}") from exc
        if not token:
            raise CorralError("Keystone issued no token")
        return token

    return provider


class CorralClient:
    def __init__(
        self,
        url: str,
        token: str | TokenProvider,
        timeout: tuple[float, float] = (CONNECT_TIMEOUT, READ_TIMEOUT),
    ):
        self.url = url.rstrip("/")
        self.tokens: TokenProvider = (lambda renew=False: token) if isinstance(token, str) else token
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update({"Accept": "application/json"})

    def _send(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        """One request with the current token; after a 401, once more with a new one."""
        token = self.tokens()
        response = self.session.request(method, url, headers={"X-Auth-Token": token}, **kwargs)
        if response.status_code == 401:
            renewed = self.tokens(renew=True)
            if renewed != token:
                response.close()
                response = self.session.request(method, url, headers={"X-Auth-Token": renewed}, **kwargs)
        return response

    def register(self, registration: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self._send(
                "POST",
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
            response = self._send("GET", f"{self.url}/image/v2/images/{image_id}", timeout=self.timeout)
        except requests.RequestException as exc:
            raise CorralError(f"Image {image_id} could not be read: {exc}") from exc
        if response.status_code != 200:
            raise CorralError(f"Image {image_id} could not be read: {_describe(response)}")
        return response.json()

    def image_chunks(self, image_id: str) -> Iterator[bytes]:
        """The image's data, streamed in chunks (never all in memory)."""
        try:
            response = self._send(
                "GET", f"{self.url}/image/v2/images/{image_id}/file", stream=True, timeout=self.timeout
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
