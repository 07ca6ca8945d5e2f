"""Response bodies of ``/os-image-cache-jobs``."""

from aggregates.jobs.serializers import progress


def image_result(row):
    return {
        "id": str(row.image_id),
        "status": row.status,
        "error": row.error or None,
        "bytes": row.bytes,
        "seconds": row.seconds,
    }


def host(item):
    return {
        "host": item.host,
        "status": item.status,
        "reason": item.reason or None,
        "images": [image_result(row) for row in item.image_items.all()],
    }


def job(row, with_hosts=True):
    body = {
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


def job_body(row):
    return {"job": job(row)}


def job_list_body(rows):
    return {"jobs": [job(row) for row in rows]}
