"""The compute side's client of the Placement API, over HTTP only, so that it
drives our placement at /placement or an upstream one unchanged.

Every call names its microversion. Provider aggregates are read and written
at 1.23: the bodies are those of 1.19 (they carry the provider generation)
and errors carry codes, so that a ``placement.concurrent_update`` conflict
is told apart from other 409s. Inventories and traits are written at 1.26
(a reservation may equal the total). A conflicting update of aggregates,
inventories or traits is retried from a fresh read, four attempts in all,
as Nova does.
"""
import logging
import threading
import uuid
from datetime import timedelta
from typing import NamedTuple

import requests
from django.conf import settings
from django.utils import timezone

log = logging.getLogger(__name__)

AGGREGATES_VERSION = "1.23"
PROVIDERS_VERSION = "1.14"
CREATE_PROVIDER_VERSION = "1.20"
INVENTORIES_VERSION = TRAITS_VERSION = "1.26"
CONFLICT_ATTEMPTS = 4
CONCURRENT_UPDATE = "placement.concurrent_update"
INVENTORY_IN_USE = "placement.inventory.inuse"


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


class InventoryInUse(PlacementError):
    """Placement refused to lower an inventory below its allocations."""


class Update(NamedTuple):
    """The outcome of a read-modify-write of a provider's aggregates,
    inventories or traits: whether placement changed, and the provider
    generation before and after."""

    changed: bool
    generation_before: int
    generation: int


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
        error_class = PlacementError
        if response.status_code == 404:
            error_class = ProviderNotFound
        elif code == INVENTORY_IN_USE:
            error_class = InventoryInUse
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
        aggregates. Returns whether placement was changed."""
        return self.update_provider_aggregates(provider_uuid, add, remove).changed

    def update_provider_aggregates(self, provider_uuid, add=(), remove=()):
        """change_provider_aggregates, returning the whole Update."""
        add = {normalized(a) for a in add}
        remove = {normalized(a) for a in remove}

        def wanted(current):
            current = {normalized(a) for a in current}
            changed = (current | add) - remove
            return None if changed == current else sorted(changed)

        return self._read_modify_write(provider_uuid, "aggregates", AGGREGATES_VERSION, wanted)

    def _read_modify_write(self, provider_uuid, key, version, wanted):
        """Read the provider's ``key`` (aggregates, inventories, traits),
        compute ``wanted(current)`` (None: nothing to change) and write it
        with the generation read. A generation conflict restarts from a
        fresh read, CONFLICT_ATTEMPTS times in all."""
        path = f"/resource_providers/{provider_uuid}/{key}"
        for attempt in range(1, CONFLICT_ATTEMPTS + 1):
            response = self.request("GET", path, version)
            if response.status_code != 200:
                raise self._error(response, f"Reading the {key} of resource provider {provider_uuid}")
            data = response.json()
            generation = data["resource_provider_generation"]
            body = wanted(data[key])
            if body is None:
                return Update(False, generation, generation)
            response = self.request("PUT", path, version, body={key: body, "resource_provider_generation": generation})
            if response.status_code == 200:
                return Update(True, generation, response.json()["resource_provider_generation"])
            error = self._error(response, f"Updating the {key} of resource provider {provider_uuid}")
            if response.status_code != 409 or error.code != CONCURRENT_UPDATE:
                raise error
            log.debug("Generation conflict on provider %s (attempt %d of %d)", provider_uuid, attempt,
                      CONFLICT_ATTEMPTS)
        raise GenerationConflict(
            f"Resource provider {provider_uuid} changed during each of {CONFLICT_ATTEMPTS} attempts to update "
            f"its {key}", status=409, code=CONCURRENT_UPDATE,
        )

    # --- what the resource tracker keeps up to date -----------------------

    def create_provider(self, provider_uuid, name):
        """Create a root resource provider; returns its generation."""
        response = self.request("POST", "/resource_providers", CREATE_PROVIDER_VERSION,
                                body={"uuid": str(provider_uuid), "name": name})
        if response.status_code != 200:
            raise self._error(response, f"Creating resource provider {name} ({provider_uuid})")
        return response.json()["generation"]

    def delete_provider(self, provider_uuid):
        """Delete a provider; returns False when placement had none."""
        response = self.request("DELETE", f"/resource_providers/{provider_uuid}", PROVIDERS_VERSION)
        if response.status_code == 404:
            return False
        if response.status_code != 204:
            raise self._error(response, f"Deleting resource provider {provider_uuid}")
        return True

    def set_inventories(self, provider_uuid, inventories, managed):
        """Give the provider ``inventories`` ({resource class: record}):
        the classes in ``managed`` that ``inventories`` lacks are removed,
        other classes are kept. Raises InventoryInUse when placement
        refuses to go below the allocations."""

        def wanted(current):
            changed = {rc: record for rc, record in current.items() if rc not in managed}
            changed.update(inventories)
            return None if changed == current else changed

        return self._read_modify_write(provider_uuid, "inventories", INVENTORIES_VERSION, wanted)

    def set_trait(self, provider_uuid, trait, present):
        """Add or remove one trait, keeping the provider's others."""

        def wanted(current):
            changed = set(current) | {trait} if present else set(current) - {trait}
            return None if changed == set(current) else sorted(changed)

        return self._read_modify_write(provider_uuid, "traits", TRAITS_VERSION, wanted)


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
