"""Response bodies of ``/os-image-cache-jobs``."""

from collections.abc import Iterable
from typing import Any

from aggregates.jobs.serializers import progress
from aggregates.precache.models import ImageCacheHost, ImageCacheJob, ImageCacheResult


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
