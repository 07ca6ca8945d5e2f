"""Celery tasks of server moves: thin wrappers with explicit names that stay
when code moves (beat schedules name them)."""

from dataclasses import asdict
from typing import Any

from celery import shared_task

from aggregates.moves import confirmation, recovery, running


@shared_task(name="corral.moves.run")
def run(migration_pk: int) -> dict[str, Any]:
    """Schedule one accepted move and record its outcome."""
    return asdict(running.run_move(migration_pk))


@shared_task(name="corral.moves.confirm_resizes")
def confirm_resizes() -> int:
    """Confirm cold migrations older than RESIZE_CONFIRM_WINDOW (periodic; 0 = never)."""
    return confirmation.confirm_resizes()


@shared_task(name="corral.moves.resume")
def resume() -> dict[str, int]:
    """Finish the moves a dead worker left accepted or running (periodic)."""
    return recovery.resume_moves()
