"""``manage.py recheck_pinned_images``: the re-check of every aggregate's
pinned images, as the beat runs it (``corral.precache.recheck_pins``), for
a deployment without a broker (no beat): run it from cron or a systemd
timer. ``--aggregate ID`` re-checks one aggregate."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aggregates.errors import ServiceError
from aggregates.identity.caller import Caller
from aggregates.precache import pins


class Command(BaseCommand):
    help = "Re-check the pinned images on their aggregates' hosts and re-cache what is missing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--aggregate", type=int, help="only this aggregate (its id)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["aggregate"] is None:
            counts = pins.recheck_all()
            self.stdout.write(
                f"Re-checked {counts['aggregates']} aggregate(s): {counts['jobs']} job(s) started, "
                f"{counts['failed']} failed."
            )
            if counts["failed"]:
                raise CommandError("Some aggregates could not be re-checked (see the log).")
            return
        try:
            done = pins.recheck(Caller.system(pins.SYSTEM_CALLER), options["aggregate"])
        except ServiceError as exc:
            raise CommandError(exc.message) from exc
        job = f"job {done.job.uuid} started" if done.job else "nothing to re-cache"
        unreachable = f", {len(done.unreachable)} could not be asked" if done.unreachable else ""
        self.stdout.write(f"Re-checked: {len(done.asked)} host(s) answered{unreachable}; {job}.")
