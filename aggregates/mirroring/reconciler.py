"""Reconciliation: repair the drift, record the run, exit codes as nova-manage."""

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from aggregates import placement_client
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import ComputeNode
from aggregates.mirroring import resource_tracker
from aggregates.mirroring.applier import drain_pending
from aggregates.mirroring.drift import AggregateDrift, Association, DriftReport, ProviderMatcher, drift_report
from aggregates.mirroring.models import PlacementMirrorRequest, ReconciliationRun
from aggregates.placement_client import PlacementClient, PlacementError, PlacementUnreachable

log = logging.getLogger("aggregates.mirroring")  # one logger for the outbox, its applier and the reconciler


# --- reconciliation ------------------------------------------------------------

EXIT_OK = 0
EXIT_READ_FAILED = 2
EXIT_UPDATE_FAILED = 3
EXIT_NO_COMPUTE_NODE = 5
EXIT_NO_PROVIDER = 6
EXIT_UNEXPECTED = 255

VERBOSE, DRIFT, ERROR, SUMMARY = "verbose", "drift", "error", "summary"


@dataclass
class Reconciliation:
    """What a reconciliation did: its recorded run, the drift it found and
    its output lines as (kind, text); kind is VERBOSE (details), DRIFT
    (a change made or, in a dry run, to make), ERROR or SUMMARY (outcomes
    always worth showing)."""

    run: ReconciliationRun
    drift: DriftReport | None = None
    lines: list[tuple[str, str]] = field(default_factory=list)

    def say(self, kind: str, text: str) -> None:
        self.lines.append((kind, text))


def reconcile(
    trigger: str, dry_run: bool = False, prune: bool = False, placement: PlacementClient | None = None
) -> Reconciliation:
    """Make placement's associations match Corral's aggregates: apply the
    pending mirror requests (backoff or not), then add the missing
    associations and, with ``prune``, remove the stale ones (unknown
    providers are only reported). ``dry_run`` changes nothing. Every run is
    recorded as a ReconciliationRun; its exit_code follows nova-manage
    placement sync_aggregates (0, 2, 3, 5, 6, 255)."""
    placement = placement or placement_client.client()
    started, before = time.monotonic(), placement.requests_made
    result = Reconciliation(ReconciliationRun.objects.create(trigger=trigger, dry_run=dry_run, prune=prune))
    run = result.run
    try:
        if not dry_run:
            _drain_before(result, placement)
        listing = _reconcile_providers(result, placement, dry_run)
        result.say(VERBOSE, "Filling in missing placement aggregates")
        result.drift = drift_report(placement, listing)
        for drift in result.drift.aggregates:
            _reconcile_aggregate(result, drift, placement, dry_run, prune)
        run.exit_code = _exit_code(result)
    except PlacementError as exc:
        result.say(
            ERROR, f"An error occurred reading resource providers and their aggregates from placement. Error: {exc}"
        )
        run.exit_code = EXIT_READ_FAILED
    except Exception as exc:
        result.say(ERROR, f"Unexpected error: {exc!r}")
        run.exit_code = EXIT_UNEXPECTED
        raise
    finally:
        _finish(result, time.monotonic() - started, placement.requests_made - before)
    return result


def _drain_before(result: Reconciliation, placement: PlacementClient) -> None:
    counts = drain_pending(limit=None, placement=placement, due_only=False)
    if any(counts.values()):
        result.say(
            SUMMARY,
            f"Applied pending placement mirror requests: {counts[PlacementMirrorRequest.DONE]} done, "
            f"{counts[PlacementMirrorRequest.PENDING]} still pending, {counts[PlacementMirrorRequest.FAILED]} failed.",
        )


def _reconcile_providers(
    result: Reconciliation, placement: PlacementClient, dry_run: bool
) -> list[dict[str, Any]] | None:
    """Give every compute node its resource provider with the right
    inventories and disabled trait. Providers whose generation has not
    moved since Corral last wrote them, for a node that still wants the
    same, are taken as in sync without reading them. Returns the provider
    listing, or None when providers were created (it is stale)."""
    run = result.run
    result.say(VERBOSE, "Checking the resource providers of compute nodes")
    listing = placement.list_providers()
    nodes = list(ComputeNode.objects.select_related("service").order_by("id"))
    providers = ProviderMatcher(listing, nodes)
    generations = {provider["uuid"]: provider["generation"] for provider in listing}
    for node in nodes:
        provider_uuid = providers.of_node.get(node.pk)
        if provider_uuid is not None and resource_tracker.in_sync(node, generations[provider_uuid]):
            continue
        name = f"compute node {node.hypervisor_hostname} (host {node.host}, uuid {node.uuid})"
        if dry_run:
            result.say(
                DRIFT,
                f"Would create the resource provider of {name}."
                if provider_uuid is None
                else f"Would check the inventories and traits of resource provider {provider_uuid} of {name}.",
            )
            continue
        try:
            outcome = resource_tracker.sync_node(node, placement, provider_uuid)
        except PlacementUnreachable:
            raise  # no use trying the next nodes: the run ends as "placement could not be read"
        except PlacementError as exc:
            run.failures += 1
            result.say(ERROR, f"Failed updating the resource provider of {name}. Error: {exc}")
            continue
        run.providers_created += outcome.created
        run.inventories_updated += outcome.inventory_changed and not outcome.created
        run.traits_updated += outcome.traits_changed
        changes = [
            text
            for done, text in (
                (outcome.created, "created"),
                (outcome.inventory_changed, "inventories set"),
                (outcome.traits_changed, "COMPUTE_STATUS_DISABLED trait set"),
            )
            if done
        ]
        result.say(
            DRIFT if changes else VERBOSE,
            f"Resource provider {outcome.provider_uuid} of {name}: {', '.join(changes) or 'in sync'}.",
        )
    return None if run.providers_created else listing


def _finish(result: Reconciliation, duration: float, requests_made: int) -> None:
    run = result.run
    run.finished_at = timezone.now()
    run.duration_seconds = duration
    run.placement_requests = requests_made
    if run.exit_code not in (EXIT_READ_FAILED, EXIT_UNEXPECTED):
        result.say(
            SUMMARY,
            f"Placement resource providers: {run.providers_created} created, "
            f"{run.inventories_updated} inventories updated, {run.traits_updated} disabled traits "
            "changed.",
        )
    result.say(SUMMARY, _summary(run))
    run.messages = [text for kind, text in result.lines if kind in (ERROR, SUMMARY)]
    run.save()


def _reconcile_aggregate(
    result: Reconciliation, drift: AggregateDrift, placement: PlacementClient, dry_run: bool, prune: bool
) -> None:
    run, aggregate = result.run, drift.aggregate
    run.missing_found += len(drift.missing)
    run.stale_found += len(drift.stale)
    run.unknown_providers += len(drift.unknown_providers)
    run.hosts_without_provider += len(drift.hosts_without_provider)
    result.say(VERBOSE, f"Processing aggregate: {aggregate.name}")
    for association in drift.in_sync:
        result.say(VERBOSE, f"Processing host: {association.host}")
        result.say(
            VERBOSE,
            f"Host ({association.host}) and provider ({association.provider_uuid}) are already "
            f"in aggregate ({aggregate.uuid}).",
        )
    for association in drift.missing:
        result.say(VERBOSE, f"Processing host: {association.host}")
        _apply(result, placement, aggregate, association, dry_run, add=True)
    for association in drift.stale:
        if prune:
            _apply(result, placement, aggregate, association, dry_run, add=False)
        else:
            result.say(
                VERBOSE,
                f"Host ({association.host}) and provider ({association.provider_uuid}) are in "
                f"aggregate ({aggregate.uuid}) in placement only; --prune removes them.",
            )
    for provider in drift.unknown_providers:
        result.say(
            VERBOSE,
            f"Provider ({provider['uuid']}, named {provider['name']}) is in aggregate "
            f"({aggregate.uuid}) but is no compute node of Corral; left alone.",
        )


def _apply(
    result: Reconciliation,
    placement: PlacementClient,
    aggregate: Aggregate,
    association: Association,
    dry_run: bool,
    add: bool,
) -> None:
    host, provider_uuid = association.host, association.provider_uuid
    done = (
        f"host ({host}) and provider ({provider_uuid}) to aggregate ({aggregate.uuid})."
        if add
        else f"host ({host}) and provider ({provider_uuid}) from aggregate ({aggregate.uuid})."
    )
    if dry_run:
        result.say(DRIFT, ("Would add " if add else "Would remove ") + done)
        return
    change = {"add": [aggregate.uuid]} if add else {"remove": [aggregate.uuid]}
    try:
        update = placement.update_provider_aggregates(provider_uuid, **change)
    except PlacementError as exc:
        result.run.failures += 1
        result.say(
            ERROR,
            f"Failed updating provider aggregates for host ({host}), provider ({provider_uuid}) "
            f"and aggregate ({aggregate.uuid}). Error: {exc}",
        )
        return
    resource_tracker.followed(update, host=host, hypervisor_hostname=association.node)
    if add:
        result.run.added += 1
        result.say(DRIFT, "Successfully added " + done)
    else:
        result.run.removed += 1
        result.say(DRIFT, "Removed " + done)


def _exit_code(result: Reconciliation) -> int:
    """The highest applicable of nova-manage's codes: failed updates (3)
    first, then hosts without provider (6), then without compute node (5)."""
    drift = result.drift
    assert drift is not None  # the drift report is made before the exit code is worked out
    without_node = sorted({h for item in drift.aggregates for h in item.hosts_without_node})
    without_provider = sorted({pair for item in drift.aggregates for pair in item.hosts_without_provider})
    if without_node:
        result.say(
            ERROR,
            "Unable to find matching compute node records for the following hosts; register them "
            "again (manage.py register_host, or let their host agents report) and then retry. "
            f"Missing: {','.join(without_node)}",
        )
    if without_provider:
        listed = ",".join(f"({host}={node_uuid})" for host, node_uuid in without_provider)
        result.say(
            ERROR,
            "Unable to find matching resource provider record in placement with uuid for the following "
            f"hosts: {listed}. Providers are created when hosts register: register these hosts again "
            "and then retry.",
        )
    if result.run.failures:
        return EXIT_UPDATE_FAILED
    if without_provider:
        return EXIT_NO_PROVIDER
    if without_node:
        return EXIT_NO_COMPUTE_NODE
    return EXIT_OK


def _summary(run: ReconciliationRun) -> str:
    if run.exit_code == EXIT_READ_FAILED:
        return "Placement aggregates: nothing checked, placement could not be read."
    if run.exit_code == EXIT_UNEXPECTED:
        return "Placement aggregates: stopped by an unexpected error."
    text = (
        f"Placement aggregates: {run.missing_found} missing, {run.stale_found} stale, "
        f"{run.unknown_providers} on unknown providers, {run.hosts_without_provider} node(s) without provider; "
        f"{run.added} added, {run.removed} removed, {run.failures} failed"
    )
    if run.dry_run:
        text += " (dry run: nothing changed)"
    elif run.stale_found and not run.prune:
        text += " (run with --prune to remove the stale ones)"
    return text + "."
