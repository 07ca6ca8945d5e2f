"""Response bodies of the maintenance routes and of capacity headroom."""

from collections.abc import Iterable
from typing import Any

from aggregates.jobs.serializers import progress
from aggregates.maintenance.headroom import Headroom
from aggregates.maintenance.models import MaintenanceItem, MaintenanceJob
from aggregates.maintenance.planning import Plan, PlannedMove


def item(row: MaintenanceItem) -> dict[str, Any]:
    return {
        "id": str(row.server_uuid),
        "name": row.name,
        "source": row.source,
        "target": row.target,
        "status": row.status,
        "explanation": row.message or None,
        "migration_id": row.migration_uuid or None,
        "decision_id": row.decision_uuid or None,
    }


def job(row: MaintenanceJob, with_servers: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": str(row.uuid),
        "host": row.host,
        "action": row.action,
        "reason": row.reason or None,
        "strategy": row.strategy,
        "prefer_aggregate_peers": row.prefer_aggregate_peers,
        "rebalance": row.rebalance,
        **progress(row),
    }
    if with_servers:
        body["servers"] = [item(i) for i in row.items.all()]
    return body


def job_body(row: MaintenanceJob) -> dict[str, dict[str, Any]]:
    return {"job": job(row)}


def job_list_body(rows: Iterable[MaintenanceJob]) -> dict[str, list[dict[str, Any]]]:
    return {"jobs": [job(row) for row in rows]}


def planned(move: PlannedMove) -> dict[str, Any]:
    return {
        "id": move.server_uuid,
        "name": move.name,
        "source": move.source,
        "flavor": move.flavor,
        "resources": dict(move.resources),
        "target": move.target,
        "status": "would_move" if move.target else "would_stay",
        "explanation": move.reason or None,
        "rejected_by": dict(move.rejected_by),
    }


def plan_body(plan: Plan) -> dict[str, dict[str, Any]]:
    return {
        "plan": {
            "host": plan.host,
            "action": plan.action,
            "strategy": plan.strategy,
            "dry_run": True,
            "total": len(plan.servers),
            "movable": plan.movable,
            "servers": [planned(move) for move in plan.servers],
        }
    }


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 3)


def headroom_body(headroom: Headroom) -> dict[str, dict[str, Any]]:
    return {
        "headroom": {
            "scope": headroom.scope,
            "name": headroom.name,
            "aggregate_id": headroom.aggregate_id,
            "hosts": len(headroom.hosts),
            "lost_hosts": list(headroom.lost_hosts),
            "closed_hosts": list(headroom.closed_hosts),
            "servers": headroom.servers,
            "fits": headroom.fits,
            "resources": {
                figure.resource_class: {
                    "capacity": _number(figure.capacity),
                    "used": _number(figure.used),
                    "free_after": _number(figure.free_after),
                    "lost_capacity": _number(figure.lost_capacity),
                    "moved": _number(figure.moved),
                }
                for figure in headroom.resources
            },
            "stranded": [planned(move) for move in headroom.stranded],
        }
    }
