"""The placement mirror state of an aggregate's hosts, as the aggregate page
shows it: read from the configured placement through the placement client
(one request a page), never from placement's tables, so that it is right
whichever placement PLACEMENT_URL names."""

from collections.abc import Mapping, Sequence

from aggregates import placement_client
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import ComputeNode
from aggregates.mirroring.models import PlacementMirrorRequest
from aggregates.placement_client import PlacementError, PlacementUnreachable

NO_NODE = ("bad", "no compute node", "The host has no compute node, so no provider to mirror to.")
MISSING = (
    "bad",
    "missing",
    "Placement lacks the association: run the reconciler (manage.py sync_placement_aggregates).",
)
UNREACHABLE = "unknown: placement unreachable"
PLACEMENT_FAILED = "unknown: placement error"

# (badge level, label, detail)
MirrorState = tuple[str, str, str]


def associated_providers(aggregate: Aggregate) -> set[str]:
    """The uuids of the providers placement associates with ``aggregate``
    (one GET /resource_providers?member_of=...)."""
    providers = placement_client.client().list_providers(member_of=aggregate.uuid)
    return {str(p["uuid"]) for p in providers}


def _outbox_note(row: PlacementMirrorRequest | None) -> str:
    if row is None or row.status not in (PlacementMirrorRequest.PENDING, PlacementMirrorRequest.FAILED):
        return ""
    if row.status == PlacementMirrorRequest.PENDING:
        return f" The change is pending in the outbox (attempt {row.attempts})."
    return f" The change failed in the outbox: {row.last_error}"


def mirror_states(
    aggregate: Aggregate, hosts: Sequence[str], nodes_of_host: Mapping[str, Sequence[ComputeNode]]
) -> dict[str, MirrorState]:
    """host -> (badge level, label, detail) for ``hosts`` of the aggregate:
    whether placement associates the host's providers with the aggregate,
    else the state of the host's latest outbox row. When placement cannot
    be read, the state is unknown, with the cause (and the outbox row's
    state, which is known)."""
    latest: dict[str, PlacementMirrorRequest] = {}
    rows = PlacementMirrorRequest.objects.filter(aggregate_uuid=aggregate.uuid, host__in=hosts).order_by("id")
    for outbox_row in rows:
        latest[outbox_row.host] = outbox_row
    associated: set[str] = set()
    failure: tuple[str, str] | None = None
    if any(nodes_of_host.get(host) for host in hosts):
        try:
            associated = associated_providers(aggregate)
        except PlacementUnreachable as exc:
            failure = (UNREACHABLE, exc.message)
        except PlacementError as exc:
            failure = (PLACEMENT_FAILED, exc.message)
    states: dict[str, MirrorState] = {}
    for host in hosts:
        nodes = nodes_of_host.get(host, [])
        row = latest.get(host)
        if not nodes:
            states[host] = NO_NODE
        elif failure is not None:
            states[host] = ("warn", failure[0], failure[1] + _outbox_note(row))
        elif all(str(n.uuid) in associated for n in nodes):
            states[host] = ("ok", "in placement", "")
        elif row is not None and row.status == PlacementMirrorRequest.PENDING:
            states[host] = ("warn", "pending", row.last_error or f"attempt {row.attempts}")
        elif row is not None and row.status == PlacementMirrorRequest.FAILED:
            states[host] = ("bad", "failed", row.last_error)
        else:
            states[host] = MISSING
    return states
