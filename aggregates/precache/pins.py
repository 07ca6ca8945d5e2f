"""The pre-cache policy: images an aggregate's hosts must always have cached
(pinned images), kept there by pre-cache jobs (``services.create_job``, the
same jobs as any pre-cache, marked ``pinned``):

- pinning an image caches it on every host of the aggregate;
- a host that joins the aggregate gets them: ``add_host`` sends
  ``host_joined`` inside its transaction, and the job is created in that
  same transaction (a queued row the drain starts if nothing else does);
- the re-check (``recheck``; the beat runs ``recheck_all`` every few
  minutes, the API and the console run it on demand as a retry) asks each
  host's cache what it holds, records it (``CacheCheck``), tells each host
  the whole set of images it must keep (never evicted), re-caches what went
  missing, and rolls replacements out: an image newer than a pinned one with
  the same name and owner (or pinned explicitly as ``replaces``) is pinned
  too, and the old one is unpinned once every host has the new one.

A host's state for a pinned image is the newest of what a job and the last
re-check say: ``in_progress`` (a job is caching it), ``cached``,
``missing``, or ``error`` with the reason."""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.errors import Conflict, Invalid, NotFound
from aggregates.host_aggregates import services as aggregate_services
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity.caller import Caller
from aggregates.images.models import Image

from . import drivers, services
from .drivers import DriverUnavailable, HostTarget
from .models import CacheCheck, ImageCacheJob, ImageCacheResult, PinnedImage

log = logging.getLogger(__name__)

JOB_LABEL = "pinned images"
SYSTEM_CALLER = "pinned-images"

IN_PROGRESS = "in_progress"
CACHED = CacheCheck.CACHED
MISSING = CacheCheck.MISSING
ERROR = CacheCheck.ERROR
STATES = (CACHED, MISSING, IN_PROGRESS, ERROR)


@dataclass
class HostState:
    host: str
    state: str
    reason: str = ""
    at: datetime | None = None


@dataclass
class PinRow:
    pin: PinnedImage
    image: Image | None
    hosts: list[HostState]

    @property
    def image_name(self) -> str | None:
        return self.image.name if self.image else None

    @property
    def on_every_host(self) -> bool:
        return bool(self.hosts) and all(h.state == CACHED for h in self.hosts)


@dataclass
class PinBoard:
    """An aggregate's pinned images, each with every member host's state."""

    aggregate: Aggregate
    hosts: list[str]
    rows: list[PinRow]


@dataclass
class Recheck:
    """What a re-check did: the hosts asked, those that could not answer
    (with why), the pins it added (replacements) and removed (replaced), the
    job re-caching what was missing (None: nothing was)."""

    asked: list[str] = field(default_factory=list)
    unreachable: dict[str, str] = field(default_factory=dict)
    adopted: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    job: ImageCacheJob | None = None


def _system() -> Caller:
    return Caller.system(SYSTEM_CALLER)


def _record(caller: Caller, event_type: str, aggregate: Aggregate, payload: dict[str, Any]) -> None:
    events.record(
        caller,
        event_type,
        object_type="aggregate",
        object_id=aggregate.id,
        object_uuid=aggregate.uuid,
        payload={"aggregate_id": aggregate.id, "aggregate_name": aggregate.name, **payload},
    )


def _image_uuid(image_id: str, field: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(image_id))
    except ValueError as exc:
        raise Invalid(f"Invalid image id {image_id!r}: a UUID is expected.", field=field) from exc


# --- reading ---------------------------------------------------------------


def pins_of(aggregate_id: int) -> list[PinnedImage]:
    return list(PinnedImage.objects.filter(aggregate_id=aggregate_id).order_by("created_at", "id"))


def get_pin(aggregate_id: int, image_id: str) -> PinnedImage:
    aggregate = aggregate_services.get_aggregate(aggregate_id)
    try:
        parsed = uuid.UUID(str(image_id))
    except ValueError:
        parsed = None
    pin = PinnedImage.objects.filter(aggregate=aggregate, image_id=parsed).first() if parsed else None
    if pin is None:
        raise NotFound(f"Image {image_id} is not pinned on aggregate {aggregate.name}.")
    return pin


def _result_state(result: ImageCacheResult) -> tuple[str, str]:
    if result.status in ImageCacheResult.SUCCEEDED:
        return CACHED, ""
    job = result.host_item.job
    return (
        ERROR,
        result.error or result.host_item.reason or job.error or f"the job ended with the image {result.status}",
    )


def host_states(hosts: Sequence[str], image_ids: Sequence[uuid.UUID]) -> dict[tuple[str, str], HostState]:
    """Each (host, image)'s state: the newest of its last job result and its
    last re-check; in progress while an unfinished job still has to cache
    it; missing when neither ever saw it."""
    if not hosts or not image_ids:
        return {}
    checks = {(c.host, str(c.image_id)): c for c in CacheCheck.objects.filter(host__in=hosts, image_id__in=image_ids)}
    latest: dict[tuple[str, str], ImageCacheResult] = {}
    results = (
        ImageCacheResult.objects.filter(host_item__host__in=hosts, image_id__in=image_ids)
        .select_related("host_item__job")
        .order_by("id")
    )
    for row in results:
        latest[(row.host_item.host, str(row.image_id))] = row
    states = {}
    for host in hosts:
        for image_id in image_ids:
            key = (host, str(image_id))
            result, check = latest.get(key), checks.get(key)
            if (
                result is not None
                and result.status not in ImageCacheResult.FINISHED
                and not result.host_item.job.is_finished
            ):
                states[key] = HostState(
                    host, IN_PROGRESS, "", result.host_item.started_at or result.host_item.job.created_at
                )
                continue
            seen: list[HostState] = []
            if result is not None:
                state, reason = _result_state(result)
                seen.append(HostState(host, state, reason, result.finished_at or result.host_item.job.finished_at))
            if check is not None:
                seen.append(HostState(host, check.state, check.reason, check.checked_at))
            known = [s for s in seen if s.at is not None]
            states[key] = (
                max(known, key=lambda s: s.at or timezone.now())
                if known
                else HostState(host, MISSING, "not checked yet")
            )
    return states


def board(aggregate_id: int) -> PinBoard:
    aggregate = aggregate_services.get_aggregate(aggregate_id)
    hosts = sorted(aggregate_services.hosts_of(aggregate))
    pins = pins_of(aggregate.id)
    images = {image.id: image for image in Image.objects.filter(pk__in=[p.image_id for p in pins])}
    states = host_states(hosts, [p.image_id for p in pins])
    rows = []
    for pin in pins:
        image = images.get(pin.image_id)
        if image is None:
            host_rows = [HostState(h, ERROR, "the image no longer exists") for h in hosts]
        else:
            host_rows = [states[(h, str(pin.image_id))] for h in hosts]
        rows.append(PinRow(pin, image, host_rows))
    return PinBoard(aggregate, hosts, rows)


# --- pinning ---------------------------------------------------------------


def pin_image(caller: Caller, aggregate_id: int, image_id: str, replaces: str | None = None) -> PinnedImage:
    """Pin ``image_id`` on the aggregate and cache it on every member host
    (a job). ``replaces``: a pinned image this one replaces, unpinned by the
    re-check once every host has this one. 404 for the aggregate, 400 for an
    image that cannot be cached or a ``replaces`` not pinned here, 409 when
    already pinned."""
    aggregate = aggregate_services.get_aggregate(aggregate_id)
    image = services.image_to_cache(caller, str(_image_uuid(image_id, "image_id")), field="image_id")
    replaced = None
    if replaces:
        replaced = _image_uuid(replaces, "replaces")
        if replaced == image.id:
            raise Invalid("An image cannot replace itself.", field="replaces")
        if not PinnedImage.objects.filter(aggregate=aggregate, image_id=replaced).exists():
            raise Invalid(f"Image {replaces} is not pinned on aggregate {aggregate.name}.", field="replaces")
    with transaction.atomic():
        Aggregate.objects.select_for_update().filter(pk=aggregate.pk).first()
        if PinnedImage.objects.filter(aggregate=aggregate, image_id=image.id).exists():
            raise Conflict(f"Image {image.id} is already pinned on aggregate {aggregate.name}.", field="image_id")
        pin = _pin(caller, aggregate, image, replaced)
    return pin


def _pin(caller: Caller, aggregate: Aggregate, image: Image, replaces: uuid.UUID | None) -> PinnedImage:
    """The pin row, its event, and the job caching it on every member host."""
    pin = PinnedImage.objects.create(
        aggregate=aggregate, image_id=image.id, replaces=replaces, created_by=caller.username
    )
    _record(
        caller,
        "aggregate.pinned_image.create",
        aggregate,
        {"image_id": str(image.id), "replaces": str(replaces) if replaces else None},
    )
    hosts = aggregate_services.hosts_of(aggregate)
    if hosts:
        _note(hosts, [image.id])
        services.create_job(caller, aggregate, {h: [image] for h in hosts}, [image], JOB_LABEL, pinned=True)
    return pin


def _note(hosts: Sequence[str], image_ids: Sequence[uuid.UUID]) -> None:
    """A check row for each (host, image) that has none yet ("not checked
    yet"): the hosts told of a pin are known, so a host that leaves the
    aggregate is told it no longer holds it (``release_stale_pins``)."""
    CacheCheck.objects.bulk_create(
        [CacheCheck(host=h, image_id=i, state=MISSING, reason="not checked yet") for h in hosts for i in image_ids],
        ignore_conflicts=True,
    )


def unpin_image(caller: Caller, aggregate_id: int, image_id: str) -> None:
    """Unpin: the hosts keep the image until their cache evicts it (the next
    re-check tells them it is no longer pinned)."""
    pin = get_pin(aggregate_id, image_id)
    aggregate = pin.aggregate
    with transaction.atomic():
        _unpin(caller, aggregate, pin, reason="")


def _unpin(caller: Caller, aggregate: Aggregate, pin: PinnedImage, reason: str) -> None:
    PinnedImage.objects.filter(aggregate=aggregate, replaces=pin.image_id).update(replaces=None)
    pin.delete()
    payload: dict[str, Any] = {"image_id": str(pin.image_id)}
    if reason:
        payload["reason"] = reason
    _record(caller, "aggregate.pinned_image.delete", aggregate, payload)


# --- a host joins ------------------------------------------------------------


def on_host_joined(sender: object, *, aggregate: Aggregate, host: str, caller: Caller, **kwargs: Any) -> None:
    """``host_joined``'s receiver, inside ``add_host``'s transaction: a job
    caching the aggregate's pinned images on the new host."""
    image_ids = [p.image_id for p in pins_of(aggregate.id)]
    images = list(Image.objects.filter(pk__in=image_ids, status=Image.ACTIVE))
    if images:
        _note([host], [image.id for image in images])
        services.create_job(caller, aggregate, {host: images}, images, JOB_LABEL, pinned=True)


def connect() -> None:
    aggregate_services.host_joined.connect(on_host_joined, dispatch_uid="precache.pins.on_host_joined")


# --- the re-check ------------------------------------------------------------


def _adopt_replacements(caller: Caller, aggregate: Aggregate) -> list[str]:
    """Pin, as the replacement of each pinned image, the newest active image
    with the same name and owner created after it (unless pinned already)."""
    adopted = []
    pins = pins_of(aggregate.id)
    pinned = {p.image_id for p in pins}
    images = {i.id: i for i in Image.objects.filter(pk__in=pinned)}
    for pin in pins:
        old = images.get(pin.image_id)
        if old is None or not old.name:
            continue
        newer = (
            Image.objects.filter(name=old.name, owner=old.owner, status=Image.ACTIVE, created_at__gt=old.created_at)
            .order_by("-created_at", "-id")
            .first()
        )
        if newer is None or newer.id in pinned:
            continue
        with transaction.atomic():
            Aggregate.objects.select_for_update().filter(pk=aggregate.pk).first()
            if PinnedImage.objects.filter(aggregate=aggregate, image_id=newer.id).exists():
                continue
            _pin(caller, aggregate, newer, pin.image_id)
        pinned.add(newer.id)
        adopted.append(str(newer.id))
    return adopted


def _drop_deleted(caller: Caller, aggregate: Aggregate) -> list[str]:
    """Unpin the images deleted from the image service (the hosts may evict them)."""
    pins = pins_of(aggregate.id)
    existing = set(Image.objects.filter(pk__in=[p.image_id for p in pins]).values_list("pk", flat=True))
    dropped = []
    for pin in pins:
        if pin.image_id not in existing:
            with transaction.atomic():
                _unpin(caller, aggregate, pin, reason="the image was deleted")
            dropped.append(str(pin.image_id))
    return dropped


def _retire_replaced(caller: Caller, aggregate: Aggregate) -> list[str]:
    """Unpin each image whose replacement every member host has cached."""
    retired: list[str] = []
    hosts = aggregate_services.hosts_of(aggregate)
    replacing = [p for p in pins_of(aggregate.id) if p.replaces]
    if not hosts or not replacing:
        return retired
    states = host_states(hosts, [p.image_id for p in replacing])
    for pin in replacing:
        if all(states[(h, str(pin.image_id))].state == CACHED for h in hosts):
            old = PinnedImage.objects.filter(aggregate=aggregate, image_id=str(pin.replaces)).first()
            if old is not None:
                with transaction.atomic():
                    _unpin(caller, aggregate, old, reason=f"replaced by {pin.image_id}, cached on every host")
                retired.append(str(old.image_id))
            PinnedImage.objects.filter(pk=pin.pk).update(replaces=None)
    return retired


def _targets(hosts: Sequence[str]) -> dict[str, HostTarget]:
    nodes: dict[str, ComputeNode] = {}
    for node in ComputeNode.objects.filter(host__in=hosts, service__binary=Service.COMPUTE).order_by("host", "id"):
        nodes.setdefault(node.host, node)
    return {h: HostTarget(host=h, address=n.host_ip, agent_url=n.agent_url or "") for h, n in nodes.items()}


def _pins_by_host(hosts: Sequence[str]) -> dict[str, list[str]]:
    """Every host's pinned images, over all the aggregates it is in."""
    pinned: dict[str, set[str]] = defaultdict(set)
    rows = PinnedImage.objects.filter(aggregate__host_items__host__in=hosts).values_list(
        "aggregate__host_items__host", "image_id"
    )
    for host, image_id in rows:
        pinned[host].add(str(image_id))
    return {h: sorted(pinned.get(h, ())) for h in hosts}


def _in_parallel(work: Any, targets: list[HostTarget]) -> list[Any]:
    if not targets:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(settings.CACHE_LISTING_CONCURRENCY, len(targets)))) as pool:
        return list(pool.map(work, targets))


def recheck(caller: Caller, aggregate_id: int, hosts: Sequence[str] | None = None) -> Recheck:
    """Re-check the aggregate's hosts (all, or ``hosts`` among them): adopt
    replacements, unpin deleted images, ask each up host's cache what it holds, unpin what every
    host has replaced, tell each host its whole pinned set, and start one
    job caching, on the hosts that answered, the pinned images they lack
    (and no job is caching already). Safe to run again at any point: it
    only reads the hosts and writes what it saw."""
    aggregate = aggregate_services.get_aggregate(aggregate_id)
    members = aggregate_services.hosts_of(aggregate)
    if hosts is not None:
        unknown = [h for h in hosts if h not in members]
        if unknown:
            raise Invalid(f"Host {unknown[0]} is not in aggregate {aggregate.name}.", field="hosts")
    chosen = list(hosts) if hosts is not None else members
    done = Recheck(retired=_drop_deleted(caller, aggregate), adopted=_adopt_replacements(caller, aggregate))
    pins = pins_of(aggregate.id)
    if not pins or not chosen:
        done.retired += _retire_replaced(caller, aggregate)
        return done
    driver = drivers.load_driver()
    targets = _targets(chosen)
    up = set(Service.objects.filter(binary=Service.COMPUTE, host__in=chosen).up().values_list("host", flat=True))
    now = timezone.now()
    for host in chosen:
        if host not in targets:
            done.unreachable[host] = "the host has no compute node"
        elif host not in up:
            done.unreachable[host] = "the compute service is down"
    asked = [targets[h] for h in chosen if h in targets and h in up]

    def listing(target: HostTarget) -> tuple[str, list[str] | None, str]:
        try:
            return target.host, driver.cached_images(target), ""
        except Exception as exc:  # noqa: BLE001 - one silent host must not hide the others
            return target.host, None, str(getattr(exc, "message", exc))

    held: dict[str, set[str]] = {}
    for host, images, problem in _in_parallel(listing, asked):
        if images is None:
            done.unreachable[host] = problem
        else:
            held[host] = set(images)
    done.asked = sorted(held)
    image_ids = [str(p.image_id) for p in pins]
    with transaction.atomic():
        for host in chosen:
            for image_id in image_ids:
                if host in held:
                    state, reason = (CACHED, "") if image_id in held[host] else (MISSING, "not in the host's cache")
                else:
                    state, reason = ERROR, f"the host's cache could not be read: {done.unreachable.get(host, '')}"
                CacheCheck.objects.update_or_create(
                    host=host, image_id=image_id, defaults={"state": state, "reason": reason, "checked_at": now}
                )
    done.retired += _retire_replaced(caller, aggregate)

    pinned = _pins_by_host(list(held))

    def tell(target: HostTarget) -> tuple[str, str]:
        try:
            driver.set_pinned(target, pinned[target.host])
            return target.host, ""
        except Exception as exc:  # noqa: BLE001 - as above
            return target.host, str(getattr(exc, "message", exc))

    for host, problem in _in_parallel(tell, [targets[h] for h in held]):
        if problem:
            log.warning("Pinned images of host %s not told: %s", host, problem)
    done.job = _recache(caller, aggregate, sorted(held), held)
    return done


def _recache(caller: Caller, aggregate: Aggregate, hosts: list[str], held: dict[str, set[str]]) -> ImageCacheJob | None:
    """One job caching, on ``hosts``, the pinned images they do not hold and
    no unfinished job is caching (under the aggregate's lock: two re-checks
    at once start one job)."""
    with transaction.atomic():
        Aggregate.objects.select_for_update().filter(pk=aggregate.pk).first()
        pins = pins_of(aggregate.id)
        images = {i.id: i for i in Image.objects.filter(pk__in=[p.image_id for p in pins], status=Image.ACTIVE)}
        states = host_states(hosts, list(images))
        plan = {}
        for host in hosts:
            wanted = [
                image
                for image_id, image in images.items()
                if str(image_id) not in held[host] and states[(host, str(image_id))].state != IN_PROGRESS
            ]
            if wanted:
                plan[host] = wanted
        if not plan:
            return None
        used = [image for image in images.values() if any(image in wanted for wanted in plan.values())]
        return services.create_job(caller, aggregate, plan, used, JOB_LABEL, pinned=True)


def release_stale_pins(skip: Sequence[str] = ()) -> int:
    """Hosts that were told of pins no longer theirs (the host left the
    aggregate, the image was unpinned) are told their whole pinned set
    again (``skip``: hosts just told), and those check rows go once told;
    the number of hosts told."""
    pairs = list(CacheCheck.objects.values_list("host", "image_id"))
    hosts = sorted({h for h, _ in pairs})
    pinned = _pins_by_host(hosts)
    stale: dict[str, list[uuid.UUID]] = defaultdict(list)
    for host, image_id in pairs:
        if str(image_id) not in pinned[host]:
            stale[host].append(image_id)
    if not stale:
        return 0
    driver = drivers.load_driver()
    told = set(skip)
    targets = _targets([h for h in stale if h not in told])

    def tell(target: HostTarget) -> tuple[str, bool]:
        try:
            driver.set_pinned(target, pinned[target.host])
            return target.host, True
        except Exception as exc:  # noqa: BLE001 - one silent host must not hide the others
            log.info("Pinned images of host %s not told (tried again later): %s", target.host, exc)
            return target.host, False

    told |= {host for host, ok in _in_parallel(tell, list(targets.values())) if ok}
    told |= {h for h in stale if h not in targets}  # no compute node left: nobody to tell
    for host in told & set(stale):
        CacheCheck.objects.filter(host=host, image_id__in=stale[host]).delete()
    return len((told - set(skip)) & set(stale))


def recheck_all() -> dict[str, int]:
    """The beat's re-check of every aggregate that pins images, then the
    hosts told of pins no longer theirs."""
    counts = {"aggregates": 0, "jobs": 0, "failed": 0}
    rechecked: set[str] = set()
    for aggregate_id in PinnedImage.objects.values_list("aggregate_id", flat=True).distinct().order_by("aggregate_id"):
        counts["aggregates"] += 1
        try:
            done = recheck(_system(), aggregate_id)
            rechecked |= set(done.asked)
            if done.job is not None:
                counts["jobs"] += 1
        except (DriverUnavailable, NotFound) as exc:
            counts["failed"] += 1
            log.warning("Re-check of the pinned images of aggregate %s failed: %s", aggregate_id, exc.message)
        except Exception:  # noqa: BLE001 - one aggregate's failure must not stop the others
            counts["failed"] += 1
            log.exception("Re-check of the pinned images of aggregate %s failed", aggregate_id)
    try:
        counts["released"] = release_stale_pins(skip=sorted(rechecked))
    except DriverUnavailable as exc:
        log.warning("Stale pins not released: %s", exc.message)
    return counts
