"""The compute side's client of the Placement API, over HTTP only, so that it
drives our placement at /placement or an upstream one unchanged.

Every call names its microversion. Provider aggregates are read and written
at 1.23: the bodies are those of 1.19 (they carry the provider generation)
and errors carry codes, so that a ``placement.concurrent_update`` conflict
is told apart from other 409s. A conflicting aggregates update is retried
from a fresh read, four attempts in all, as Nova does.
"""
import logging
import threading
import uuid
from datetime import timedelta

import requests
from django.conf import settings
from django.utils import timezone

log = logging.getLogger(__name__)

AGGREGATES_VERSION = "1.23"
PROVIDERS_VERSION = "1.14"
CONFLICT_ATTEMPTS = 4
CONCURRENT_UPDATE = "placement.concurrent_update"


class PlacementError(Exception):
    """Placement answered with an error, or could not be reached."""

    def __init__(self, message, status=None, code=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


class PlacementUnreachable(PlacementError):
    """No HTTP answer: connection refused, timeout, DNS failure..."""


class ProviderNotFound(PlacementError):
    """Placement has no such resource provider."""


class GenerationConflict(PlacementError):
    """The provider kept changing under us for every attempt."""


def normalized(aggregate_uuid):
    return str(uuid.UUID(str(aggregate_uuid)))


class PlacementClient:
    """One HTTP session (connections are reused) to one placement endpoint.

    Not shared between threads: ``client()`` keeps one per thread."""

    def __init__(self, base_url=None, token=None, session=None, timeout=None):
        self.base_url = (base_url or settings.PLACEMENT_URL).rstrip("/")
        self._fixed_token = token
        self.session = session or requests.Session()
        self.timeout = timeout or (settings.PLACEMENT_CONNECT_TIMEOUT, settings.PLACEMENT_READ_TIMEOUT)
        self.requests_made = 0

    # --- transport -----------------------------------------------------

    def _token(self, renew=False):
        return self._fixed_token or service_token(renew=renew)

    def request(self, method, path, version, *, body=None, params=None):
        """Send one request; returns the response whatever its status, or
        raises PlacementUnreachable when no answer came."""
        response = self._send(method, path, version, body, params, self._token())
        if response.status_code == 401 and not self._fixed_token and uses_service_user():
            # Our own service token expired or was revoked: issue another once.
            response = self._send(method, path, version, body, params, self._token(renew=True))
        return response

    def _send(self, method, path, version, body, params, token):
        headers = {
            "OpenStack-API-Version": f"placement {version}",
            "X-Auth-Token": token,
            "Accept": "application/json",
        }
        self.requests_made += 1
        try:
            return self.session.request(method, self.base_url + path, json=body, params=params,
                                        headers=headers, timeout=self.timeout)
        except requests.RequestException as exc:
            raise PlacementUnreachable(
                f"Unable to communicate with the Placement API at {self.base_url}: {exc}"
            ) from exc

    @staticmethod
    def _error(response, what):
        """A PlacementError describing an unexpected answer to ``what``."""
        detail, code = response.text[:500], None
        try:
            first = response.json()["errors"][0]
            detail, code = " ".join(first.get("detail", "").split()), first.get("code")
        except (ValueError, KeyError, IndexError, TypeError):
            pass
        error_class = ProviderNotFound if response.status_code == 404 else PlacementError
        return error_class(f"{what} failed with HTTP {response.status_code}: {detail}",
                           status=response.status_code, code=code)

    # --- providers -----------------------------------------------------

    def list_providers(self, member_of=None):
        """Every resource provider (uuid, name, generation...), or only the
        providers directly associated with aggregate ``member_of``."""
        params = {"member_of": normalized(member_of)} if member_of else None
        response = self.request("GET", "/resource_providers", PROVIDERS_VERSION, params=params)
        if response.status_code != 200:
            raise self._error(response, "Listing resource providers")
        return response.json()["resource_providers"]

    def provider_uuid_by_name(self, name):
        """The uuid of the provider named ``name``; None when there is none
        (or, as Nova counts it, when the answer is ambiguous or an error)."""
        response = self.request("GET", "/resource_providers", PROVIDERS_VERSION, params={"name": name})
        if response.status_code != 200:
            log.warning("Looking up resource provider %s failed: HTTP %s", name, response.status_code)
            return None
        providers = response.json()["resource_providers"]
        if len(providers) > 1:
            log.warning("%d resource providers are named %s; mirroring none of them", len(providers), name)
        return providers[0]["uuid"] if len(providers) == 1 else None

    # --- provider aggregates -------------------------------------------

    def provider_aggregates(self, provider_uuid):
        """(set of aggregate uuids, provider generation) of a provider."""
        response = self.request("GET", f"/resource_providers/{provider_uuid}/aggregates", AGGREGATES_VERSION)
        if response.status_code != 200:
            raise self._error(response, f"Reading the aggregates of resource provider {provider_uuid}")
        data = response.json()
        return {normalized(a) for a in data["aggregates"]}, data["resource_provider_generation"]

    def change_provider_aggregates(self, provider_uuid, add=(), remove=()):
        """Add and remove aggregate uuids on a provider, keeping its other
        aggregates. Returns whether placement was changed. A generation
        conflict restarts from a fresh read, CONFLICT_ATTEMPTS times in all."""
        add = {normalized(a) for a in add}
        remove = {normalized(a) for a in remove}
        for attempt in range(1, CONFLICT_ATTEMPTS + 1):
            current, generation = self.provider_aggregates(provider_uuid)
            wanted = (current | add) - remove
            if wanted == current:
                return False
            response = self.request(
                "PUT", f"/resource_providers/{provider_uuid}/aggregates", AGGREGATES_VERSION,
                body={"aggregates": sorted(wanted), "resource_provider_generation": generation},
            )
            if response.status_code == 200:
                return True
            error = self._error(response, f"Updating the aggregates of resource provider {provider_uuid}")
            if response.status_code != 409 or error.code != CONCURRENT_UPDATE:
                raise error
            log.debug("Generation conflict on provider %s (attempt %d of %d)", provider_uuid, attempt,
                      CONFLICT_ATTEMPTS)
        raise GenerationConflict(
            f"Resource provider {provider_uuid} changed during each of {CONFLICT_ATTEMPTS} attempts to update "
            "its aggregates", status=409, code=CONCURRENT_UPDATE,
        )


# --- the token and the per-thread client -------------------------------------

_service_token = {"value": None, "expires_at": None}
_service_token_lock = threading.Lock()


def uses_service_user():
    return not settings.PLACEMENT_AUTH_TOKEN and settings.AUTH_STRATEGY != "noauth2"


def service_token(renew=False):
    """The token sent to placement: PLACEMENT_AUTH_TOKEN when set, else
    "admin" under noauth2, else a token Corral issues for its own service
    user (admin on project "service"), kept until a minute before it
    expires. Our placement checks it through PLACEMENT_TOKEN_VALIDATOR."""
    if settings.PLACEMENT_AUTH_TOKEN:
        return settings.PLACEMENT_AUTH_TOKEN
    if not uses_service_user():
        return "admin"
    with _service_token_lock:
        expires_at = _service_token["expires_at"]
        if renew or expires_at is None or expires_at - timedelta(minutes=1) <= timezone.now():
            _service_token["value"], _service_token["expires_at"] = _issue_service_token()
        return _service_token["value"]


def _issue_service_token():
    from django.contrib.auth import get_user_model

    from aggregates import identity
    from aggregates.context import ADMIN

    user, created = get_user_model().objects.get_or_create(username=settings.PLACEMENT_SERVICE_USER)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    project = identity.ensure_project("service", description="Service users of Corral")
    identity.grant(user, project, ADMIN)
    token, row = identity.issue_token(user, project)
    return token, row.expires_at


_local = threading.local()


def client():
    """This thread's PlacementClient for the configured endpoint and token
    (a new one when the settings changed)."""
    key = (settings.PLACEMENT_URL, settings.PLACEMENT_AUTH_TOKEN, settings.AUTH_STRATEGY)
    if getattr(_local, "key", None) != key:
        _local.key, _local.client = key, PlacementClient()
    return _local.client
