"""The compute side's client of the Placement API: the same HTTP requests
whether they go over a socket (PLACEMENT_URL: an upstream placement, or
Corral's elsewhere) or, for Corral's own placement (PLACEMENT_URL empty),
through the in-process transport of ``inprocess`` (no socket, no second
worker to wait for). Either way placement is never called with a database
transaction open (``PlacementTransactionError``).

Every call sends the microversion ``microversions`` names for its
operation, and the global request id of the work it is done for (else its
local request id) in ``X-OpenStack-Request-ID``. A conflicting update of a provider's aggregates, inventories or
traits (``placement.concurrent_update``) is retried from a fresh read, four
attempts in all, as Nova does; a conflicting claim or move of allocations
is the caller's to handle (``AllocationConflict``: try the next host).
"""

import logging
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple
from urllib.parse import urlencode

import orjson
import requests
from django.conf import settings

from aggregates.metrics import instruments
from aggregates.placement_client import credentials, inprocess, microversions
from aggregates.placement_client.credentials import TokenProvider
from aggregates.placement_client.errors import (
    CONCURRENT_UPDATE,
    INVENTORY_IN_USE,
    AllocationConflict,
    GenerationConflict,
    InventoryInUse,
    PlacementError,
    PlacementUnreachable,
    ProviderNotFound,
)
from aggregates.placement_client.read_cache import cached, clear_read_cache, remember
from config import request_context

log = logging.getLogger(__name__)

CONFLICT_ATTEMPTS = 4


def body_of(response: requests.Response) -> Any:
    """``response``'s JSON body (ValueError when it is none). orjson reads a
    scheduler's 1,000 candidates (450 KB) in half the standard library's
    time (3.3-3.9 against 7.2-7.3 ms). It would read an integer beyond 64
    bits as a float; placement's bodies have none (its schemas cap every
    amount at 2**31 - 1 and generations are counters)."""
    return orjson.loads(response.content)


class Update(NamedTuple):
    """The outcome of a read-modify-write of a provider's aggregates,
    inventories or traits: whether placement changed, and the provider
    generation before and after."""

    changed: bool
    generation_before: int
    generation: int


def normalized(aggregate_uuid: uuid.UUID | str) -> str:
    return str(uuid.UUID(str(aggregate_uuid)))


class PlacementClient:
    """One HTTP session (connections are reused) to one placement endpoint:
    ``base_url`` (default PLACEMENT_URL); Corral's own placement (empty, see
    ``inprocess.is_own_placement``) is reached at ``inprocess.INPROCESS_URL``
    through the in-process transport, any other URL over HTTP. It sends
    ``token``, else the tokens of ``token_provider``, else those of the
    configured provider (``credentials``).

    Not shared between threads: ``client()`` keeps one per thread."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        session: requests.Session | None = None,
        timeout: float | tuple[float, float] | None = None,
        token_provider: TokenProvider | None = None,
    ) -> None:
        base_url = settings.PLACEMENT_URL if base_url is None else base_url
        self.in_process = inprocess.is_own_placement(base_url)
        self.base_url = inprocess.INPROCESS_URL if self.in_process else base_url.rstrip("/")
        self._token_provider = credentials.fixed(token) if token else token_provider or credentials.configured()
        self.session = session or requests.Session()
        if self.in_process:
            inprocess.mount(self.session)
        self.timeout = timeout or (settings.PLACEMENT_CONNECT_TIMEOUT, settings.PLACEMENT_READ_TIMEOUT)
        self.requests_made = 0

    # --- transport -----------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        version: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
    ) -> requests.Response:
        """Send one request; returns the response whatever its status, or
        raises PlacementUnreachable when no answer came. Raises
        PlacementTransactionError, before anything is sent (or a token
        issued), when a database transaction is open."""
        inprocess.refuse_inside_transaction(f"Placement request {method} {path}")
        if method not in ("GET", "HEAD"):
            clear_read_cache()  # the console must not show what we just changed
        token = self._token_provider()
        response = self._send(method, path, version, body, params, token)
        if response.status_code == 401:
            # The token expired or was revoked: ask for another, once.
            renewed = self._token_provider(renew=True)
            if renewed != token:
                response = self._send(method, path, version, body, params, renewed)
        return response

    def _send(
        self, method: str, path: str, version: str, body: Any, params: Mapping[str, str] | None, token: str
    ) -> requests.Response:
        headers = {
            "OpenStack-API-Version": f"placement {version}",
            "X-Auth-Token": token,
            "Accept": "application/json",
        }
        forwarded = request_context.outbound_id()
        if forwarded:  # as Nova sends its global request id to placement
            headers[request_context.HEADER] = forwarded
        self.requests_made += 1
        started = time.monotonic()
        try:
            response = self.session.request(
                method, self.base_url + path, json=body, params=params, headers=headers, timeout=self.timeout
            )
        except requests.RequestException as exc:
            instruments.placement_request(method, path, "unreachable", time.monotonic() - started)
            raise PlacementUnreachable(
                f"Unable to communicate with the Placement API at {self.base_url}: {exc}"
            ) from exc
        instruments.placement_request(method, path, str(response.status_code), time.monotonic() - started)
        return response

    @staticmethod
    def _error(response: requests.Response, what: str) -> PlacementError:
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
        return error_class(
            f"{what} failed with HTTP {response.status_code}: {detail}", status=response.status_code, code=code
        )

    @classmethod
    def _conflict(cls, response: requests.Response, what: str) -> AllocationConflict:
        """The AllocationConflict of a 409 answer to a claim or a move."""
        error = cls._error(response, what)
        return AllocationConflict(error.message, status=error.status, code=error.code)

    def _read(
        self, path: str, version: str, what: str, *, params: Mapping[str, str] | None = None, max_age: float = 0
    ) -> Any:
        """GET ``path``: its JSON body, or the PlacementError of any other
        status than 200. With ``max_age`` (seconds) an answer to the same
        request read less than that long ago, by any thread of this process,
        is returned without asking placement (for the console; never for
        the read of a read-modify-write). Callers must not modify it."""
        key = (self.base_url, path, version, tuple(sorted((params or {}).items())))
        if max_age > 0:
            known = cached(key, max_age)
            if known is not None:
                return known
        response = self.request("GET", path, version, params=params)
        if response.status_code != 200:
            raise self._error(response, what)
        data = body_of(response)
        if max_age > 0:
            remember(key, data)
        return data

    def answers(self) -> None:
        """GET the version document at placement's root (the health check's
        probe): PlacementUnreachable when nothing answered, a PlacementError
        for any answer but 200."""
        response = self.request("GET", "/", microversions.ROOT)
        if response.status_code != 200:
            raise self._error(response, "Reading placement's version document")

    # --- providers -----------------------------------------------------

    def list_providers(
        self,
        member_of: uuid.UUID | str | None = None,
        *,
        name: str | None = None,
        in_tree: uuid.UUID | str | None = None,
        max_age: float = 0,
    ) -> list[dict[str, Any]]:
        """Every resource provider (uuid, name, generation, and from 1.14
        parent_provider_uuid and root_provider_uuid), or only those directly
        associated with aggregate ``member_of``, named ``name`` (exactly),
        or in the tree of provider ``in_tree``."""
        params = {}
        if member_of:
            params["member_of"] = normalized(member_of)
        if name is not None:
            params["name"] = name
        if in_tree:
            params["in_tree"] = str(in_tree)
        data = self._read(
            "/resource_providers", microversions.PROVIDERS, "Listing resource providers", params=params, max_age=max_age
        )
        return list(data["resource_providers"])

    def provider_count(self, max_age: float = 0) -> int:
        """How many resource providers placement holds (placement has no
        count: this lists them all, once per ``max_age``)."""
        return len(self.list_providers(max_age=max_age))

    def get_provider(self, provider_uuid: uuid.UUID | str, max_age: float = 0) -> dict[str, Any]:
        """One provider (as in list_providers); ProviderNotFound if none."""
        return dict(
            self._read(
                f"/resource_providers/{provider_uuid}",
                microversions.READ,
                f"Reading resource provider {provider_uuid}",
                max_age=max_age,
            )
        )

    def provider_inventories(self, provider_uuid: uuid.UUID | str, max_age: float = 0) -> dict[str, dict[str, Any]]:
        """Resource class -> inventory record (total, reserved, min_unit,
        max_unit, step_size, allocation_ratio)."""
        data = self._read(
            f"/resource_providers/{provider_uuid}/inventories",
            microversions.READ,
            f"Reading the inventories of resource provider {provider_uuid}",
            max_age=max_age,
        )
        return dict(data["inventories"])

    def provider_usages(self, provider_uuid: uuid.UUID | str, max_age: float = 0) -> dict[str, int]:
        """Resource class -> amount allocated on the provider."""
        data = self._read(
            f"/resource_providers/{provider_uuid}/usages",
            microversions.READ,
            f"Reading the usages of resource provider {provider_uuid}",
            max_age=max_age,
        )
        return dict(data["usages"])

    def usages_of_providers(self, provider_uuids: Iterable[uuid.UUID | str]) -> dict[str, dict[str, int]]:
        """{provider uuid: its usages} for each of ``provider_uuids`` that
        placement knows: one read from Corral's own placement in process,
        one read per provider from any other."""
        wanted = [str(value) for value in provider_uuids]
        if self.in_process:
            if not wanted:
                return {}
            data = self._read(
                "/_corral/provider_usages",
                microversions.INTERNAL_READS,
                "Reading usages",
                params={"uuids": ",".join(wanted)},
            )
            return dict(data["usages"])
        usages = {}
        for provider_uuid in wanted:
            try:
                usages[provider_uuid] = self.provider_usages(provider_uuid)
            except ProviderNotFound:
                continue
        return usages

    def rooms_of_providers(self, provider_uuids: Iterable[uuid.UUID | str]) -> dict[str, dict[str, Any]]:
        """{provider uuid: {"inventories": {class: record}, "usages": {class:
        used}, "traits": [names]}} for each of ``provider_uuids`` that
        placement knows: one read from Corral's own placement in process,
        three reads per provider from any other."""
        wanted = [str(value) for value in provider_uuids]
        if self.in_process:
            if not wanted:
                return {}
            data = self._read(
                "/_corral/provider_rooms",
                microversions.INTERNAL_READS,
                "Reading the providers' inventories, usages and traits",
                params={"uuids": ",".join(wanted)},
            )
            return dict(data["rooms"])
        rooms = {}
        for provider_uuid in wanted:
            try:
                rooms[provider_uuid] = {
                    "inventories": self.provider_inventories(provider_uuid),
                    "usages": self.provider_usages(provider_uuid),
                    "traits": self.provider_traits(provider_uuid),
                }
            except ProviderNotFound:
                continue
        return rooms

    def provider_traits(self, provider_uuid: uuid.UUID | str, max_age: float = 0) -> list[str]:
        """The provider's traits, sorted."""
        data = self._read(
            f"/resource_providers/{provider_uuid}/traits",
            microversions.READ,
            f"Reading the traits of resource provider {provider_uuid}",
            max_age=max_age,
        )
        return sorted(data["traits"])

    def provider_uuid_by_name(self, name: str) -> str | None:
        """The uuid of the provider named ``name``; None when there is none
        (or, as Nova counts it, when the answer is ambiguous or an error)."""
        response = self.request("GET", "/resource_providers", microversions.PROVIDERS, params={"name": name})
        if response.status_code != 200:
            log.warning("Looking up resource provider %s failed: HTTP %s", name, response.status_code)
            return None
        providers = response.json()["resource_providers"]
        if len(providers) > 1:
            log.warning("%d resource providers are named %s; mirroring none of them", len(providers), name)
        return providers[0]["uuid"] if len(providers) == 1 else None

    def providers_with_room(self, resource_class: str, amount: int, member_of: Sequence[str] = ()) -> set[str]:
        """The uuids of the providers with room for ``amount`` of
        ``resource_class``, among those the ``member_of`` values allow
        ("in:<uuid>,<uuid>" for any of those aggregates, "!in:..." for none)."""
        params = urlencode([("resources", f"{resource_class}:{amount}"), *(("member_of", m) for m in member_of)])
        data = self._read("/resource_providers?" + params, microversions.PROVIDERS_WITH_ROOM, "Listing providers")
        return {provider["uuid"] for provider in data["resource_providers"]}

    # --- allocation candidates and allocations -------------------------------

    def allocation_candidates(self, params: Sequence[tuple[str, str]]) -> dict[str, Any]:
        """GET /allocation_candidates with the query ``params`` (in their
        order): its allocation_requests and provider_summaries."""
        data: dict[str, Any] = self._read(
            "/allocation_candidates?" + urlencode(params),
            microversions.ALLOCATION_CANDIDATES,
            "Listing allocation candidates",
        )
        return data

    def consumer_allocations(self, consumer_uuid: uuid.UUID | str) -> dict[str, Any]:
        """A consumer's allocations by provider (empty when it has none),
        with its generation, project and user."""
        data: dict[str, Any] = self._read(
            f"/allocations/{consumer_uuid}",
            microversions.CONSUMER_ALLOCATIONS,
            f"Reading the allocations of {consumer_uuid}",
        )
        return data

    def claim(
        self,
        consumer_uuid: uuid.UUID | str,
        allocations: Mapping[str, Any],
        project_id: str,
        user_id: str,
        consumer_generation: int | None = None,
        consumer_type: str = "INSTANCE",
    ) -> None:
        """PUT the consumer's ``allocations`` ({provider uuid: {"resources":
        ...}}); ``consumer_generation`` None: a new consumer. Raises
        AllocationConflict when placement refuses with a conflict (a
        provider filled up, or the consumer changed meanwhile)."""
        body = {
            "allocations": allocations,
            "project_id": project_id,
            "user_id": user_id,
            "consumer_generation": consumer_generation,
            "consumer_type": consumer_type,
        }
        response = self.request("PUT", f"/allocations/{consumer_uuid}", microversions.ALLOCATIONS, body=body)
        if response.status_code == 204:
            return
        what = f"Claiming resources for {consumer_uuid}"
        raise self._conflict(response, what) if response.status_code == 409 else self._error(response, what)

    def move_allocations(
        self,
        consumer_uuid: uuid.UUID | str,
        allocations: Mapping[str, Any],
        project_id: str,
        user_id: str,
        hold_source_as: str | None = None,
    ) -> None:
        """One POST /allocations: the consumer's allocation becomes
        ``allocations`` (checked against the consumer generation just read)
        and, with ``hold_source_as`` (a migration uuid), the allocation it
        held passes to that consumer, as Nova holds it during a cold
        migration. The consumer keeps its project and user (``project_id``
        and ``user_id`` when placement has none). Raises AllocationConflict
        when placement refuses with a conflict."""
        held = self._read(
            f"/allocations/{consumer_uuid}", microversions.ALLOCATIONS, f"Reading the allocations of {consumer_uuid}"
        )
        moved = str(consumer_uuid)
        body: dict[str, Any] = {
            moved: {
                "allocations": allocations,
                "consumer_generation": held.get("consumer_generation"),
                "project_id": held.get("project_id") or project_id,
                "user_id": held.get("user_id") or user_id,
                "consumer_type": "INSTANCE",
            }
        }
        if hold_source_as:
            body[hold_source_as] = {
                "allocations": {
                    rp: {"resources": item["resources"]} for rp, item in held.get("allocations", {}).items()
                },
                "consumer_generation": None,
                "project_id": body[moved]["project_id"],
                "user_id": body[moved]["user_id"],
                "consumer_type": "MIGRATION",
            }
        response = self.request("POST", "/allocations", microversions.ALLOCATIONS, body=body)
        if response.status_code == 204:
            return
        what = f"Moving the allocations of {consumer_uuid}"
        raise self._conflict(response, what) if response.status_code == 409 else self._error(response, what)

    def hand_over_allocations(
        self, source_uuid: uuid.UUID | str, target_uuid: uuid.UUID | str, consumer_type: str = "INSTANCE"
    ) -> bool:
        """One POST /allocations, as Nova's report client moves allocations
        from one consumer to another (a reverted resize: the migration's
        hold on the source goes back to the server): the target's allocation
        becomes the source's, which is left with none; both checked against
        their consumer generations. False when the source holds nothing
        (nothing is changed). Raises AllocationConflict on a conflict."""
        source = self._read(
            f"/allocations/{source_uuid}", microversions.ALLOCATIONS, f"Reading the allocations of {source_uuid}"
        )
        if not source.get("allocations"):
            return False
        target = self._read(
            f"/allocations/{target_uuid}", microversions.ALLOCATIONS, f"Reading the allocations of {target_uuid}"
        )
        owner = {"project_id": source.get("project_id"), "user_id": source.get("user_id")}
        body: dict[str, Any] = {
            str(source_uuid): {
                "allocations": {},
                "consumer_generation": source.get("consumer_generation"),
                "consumer_type": "MIGRATION",
                **owner,
            },
            str(target_uuid): {
                "allocations": {rp: {"resources": item["resources"]} for rp, item in source["allocations"].items()},
                "consumer_generation": target.get("consumer_generation"),
                "consumer_type": consumer_type,
                **owner,
            },
        }
        response = self.request("POST", "/allocations", microversions.ALLOCATIONS, body=body)
        if response.status_code == 204:
            return True
        what = f"Moving the allocations of {source_uuid} to {target_uuid}"
        raise self._conflict(response, what) if response.status_code == 409 else self._error(response, what)

    def release(self, consumer_uuid: uuid.UUID | str) -> None:
        """Delete the consumer's allocations (none left is fine)."""
        response = self.request("DELETE", f"/allocations/{consumer_uuid}", microversions.RELEASE)
        if response.status_code not in (204, 404):
            raise self._error(response, f"Releasing the allocations of {consumer_uuid}")

    # --- provider aggregates -------------------------------------------

    def provider_aggregates(self, provider_uuid: uuid.UUID | str, max_age: float = 0) -> tuple[set[str], int]:
        """(set of aggregate uuids, provider generation) of a provider."""
        data = self._read(
            f"/resource_providers/{provider_uuid}/aggregates",
            microversions.AGGREGATES,
            f"Reading the aggregates of resource provider {provider_uuid}",
            max_age=max_age,
        )
        return {normalized(a) for a in data["aggregates"]}, data["resource_provider_generation"]

    def change_provider_aggregates(
        self,
        provider_uuid: uuid.UUID | str,
        add: Iterable[uuid.UUID | str] = (),
        remove: Iterable[uuid.UUID | str] = (),
    ) -> bool:
        """Add and remove aggregate uuids on a provider, keeping its other
        aggregates. Returns whether placement was changed."""
        return self.update_provider_aggregates(provider_uuid, add, remove).changed

    def update_provider_aggregates(
        self,
        provider_uuid: uuid.UUID | str,
        add: Iterable[uuid.UUID | str] = (),
        remove: Iterable[uuid.UUID | str] = (),
    ) -> Update:
        """change_provider_aggregates, returning the whole Update."""
        adding = {normalized(a) for a in add}
        removing = {normalized(a) for a in remove}

        def wanted(current: Any) -> list[str] | None:
            now = {normalized(a) for a in current}
            changed = (now | adding) - removing
            return None if changed == now else sorted(changed)

        return self._read_modify_write(provider_uuid, "aggregates", microversions.AGGREGATES, wanted)

    def _read_modify_write(
        self, provider_uuid: uuid.UUID | str, key: str, version: str, wanted: Callable[[Any], Any]
    ) -> Update:
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
            log.debug(
                "Generation conflict on provider %s (attempt %d of %d)", provider_uuid, attempt, CONFLICT_ATTEMPTS
            )
        raise GenerationConflict(
            f"Resource provider {provider_uuid} changed during each of {CONFLICT_ATTEMPTS} attempts to update "
            f"its {key}",
            status=409,
            code=CONCURRENT_UPDATE,
        )

    # --- what the resource tracker keeps up to date -----------------------

    def create_provider(self, provider_uuid: uuid.UUID | str, name: str) -> int:
        """Create a root resource provider; returns its generation."""
        response = self.request(
            "POST",
            "/resource_providers",
            microversions.CREATE_PROVIDER,
            body={"uuid": str(provider_uuid), "name": name},
        )
        if response.status_code != 200:
            raise self._error(response, f"Creating resource provider {name} ({provider_uuid})")
        return int(response.json()["generation"])

    def delete_provider(self, provider_uuid: uuid.UUID | str) -> bool:
        """Delete a provider; returns False when placement had none."""
        response = self.request("DELETE", f"/resource_providers/{provider_uuid}", microversions.PROVIDERS)
        if response.status_code == 404:
            return False
        if response.status_code != 204:
            raise self._error(response, f"Deleting resource provider {provider_uuid}")
        return True

    def set_inventories(
        self, provider_uuid: uuid.UUID | str, inventories: Mapping[str, Any], managed: Collection[str]
    ) -> Update:
        """Give the provider ``inventories`` ({resource class: record}):
        the classes in ``managed`` that ``inventories`` lacks are removed,
        other classes are kept. Raises InventoryInUse when placement
        refuses to go below the allocations."""

        def wanted(current: Any) -> dict[str, Any] | None:
            changed = {rc: record for rc, record in current.items() if rc not in managed}
            changed.update(inventories)
            return None if changed == current else changed

        return self._read_modify_write(provider_uuid, "inventories", microversions.INVENTORIES, wanted)

    def set_trait(self, provider_uuid: uuid.UUID | str, trait: str, present: bool) -> Update:
        """Add or remove one trait, keeping the provider's others."""
        return self.change_traits(provider_uuid, {trait} if present else set(), set() if present else {trait})

    def change_traits(
        self, provider_uuid: uuid.UUID | str, present: AbstractSet[str], absent: AbstractSet[str]
    ) -> Update:
        """Make the traits of ``present`` carried and those of ``absent`` not,
        keeping the provider's others."""

        def wanted(current: Any) -> list[str] | None:
            changed = (set(current) | present) - absent
            return None if changed == set(current) else sorted(changed)

        return self._read_modify_write(provider_uuid, "traits", microversions.TRAITS, wanted)


# --- the per-thread client ---------------------------------------------------

_local = threading.local()


def client() -> PlacementClient:
    """This thread's PlacementClient for the configured endpoint and token
    provider (a new one when the settings changed)."""
    key = (
        settings.PLACEMENT_URL,
        settings.PLACEMENT_AUTH_TOKEN,
        settings.PLACEMENT_TOKEN_PROVIDER,
        settings.AUTH_STRATEGY,
        settings.PUBLIC_URL,
        settings.CORRAL_SERVICE,
        inprocess.is_own_placement(settings.PLACEMENT_URL),  # per request: see names_this_server
    )
    if getattr(_local, "key", None) != key:
        _local.key, _local.client = key, PlacementClient()
    result: PlacementClient = _local.client
    return result
