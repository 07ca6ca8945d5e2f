"""The part of a long job's JSON every kind shares: its outcome and progress."""

from typing import Any

from aggregates.compute_api.base import isotime
from aggregates.jobs.models import LongJob


def progress(row: LongJob) -> dict[str, Any]:
    return {
        "status": row.status,
        "error": row.error or None,
        "created_at": isotime(row.created_at),
        "started_at": isotime(row.started_at),
        "finished_at": isotime(row.finished_at),
        "total": row.total,
        "done": row.done,
        "percent": row.percent,
    }
