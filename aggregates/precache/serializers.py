"""Response bodies of ``/os-image-cache-jobs``."""

from collections.abc import Iterable
from typing import Any

from aggregates.jobs.serializers import progress
from aggregates.precache.models import ImageCacheHost, ImageCacheJob, ImageCacheResult
from aggregates.precache.pins import PinBoard, PinRow, Recheck


def image_result(row: ImageCacheResult) -> dict[str, Any]:
    return {
        "id": str(row.image_id),
        "status": row.status,
        "error": row.error or None,
        "bytes": row.bytes,
        "seconds": row.seconds,
    }


def host(item: ImageCacheHost) -> dict[str, Any]:
    return {
        "host": item.host,
        "status": item.status,
        "reason": item.reason or None,
        "images": [image_result(row) for row in item.image_items.all()],
    }


def job(row: ImageCacheJob, with_hosts: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": str(row.uuid),
        "aggregate_id": row.aggregate_id,
        "aggregate_uuid": str(row.aggregate_uuid),
        "aggregate_name": row.aggregate_name,
        "image_ids": list(row.image_ids),
        **progress(row),
    }
    if with_hosts:
        body["hosts"] = [host(item) for item in row.host_items.all()]
    return body


def job_body(row: ImageCacheJob) -> dict[str, dict[str, Any]]:
    return {"job": job(row)}


def job_list_body(rows: Iterable[ImageCacheJob]) -> dict[str, list[dict[str, Any]]]:

    return {"jobs": [job(row) for row in rows]}


def _at(value: Any) -> str | None:
    return value.isoformat() if value else None


def pinned_image(row: PinRow) -> dict[str, Any]:
    return {
        "image_id": str(row.pin.image_id),
        "image_name": row.image_name,
        "replaces": str(row.pin.replaces) if row.pin.replaces else None,
        "created_at": _at(row.pin.created_at),
        "hosts": [
            {"host": h.host, "state": h.state, "reason": h.reason or None, "updated_at": _at(h.at)} for h in row.hosts
        ],
    }


def pinned_images_body(board: PinBoard) -> dict[str, Any]:
    return {"pinned_images": [pinned_image(row) for row in board.rows]}


def recheck_body(done: Recheck) -> dict[str, Any]:
    return {
        "recheck": {
            "hosts_asked": done.asked,
            "hosts_unreachable": done.unreachable,
            "pinned": done.adopted,
            "unpinned": done.retired,
            "job_id": str(done.job.uuid) if done.job else None,
        }
    }
