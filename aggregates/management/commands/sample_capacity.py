"""``manage.py sample_capacity``: a sample of capacity by flavor, as the
beat takes it (``corral.capacity.sample``), for a deployment without a
broker (no beat): run it from cron or a systemd timer. It samples only once
CAPACITY_SAMPLE_SECONDS have passed since the last sample (``--force``:
now), and prunes samples older than CAPACITY_HISTORY_DAYS."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aggregates.capacity import services
from aggregates.errors import ServiceError


class Command(BaseCommand):
    help = "Record how many more servers of each public flavor fit per zone and aggregate."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="sample now, even if the last sample is recent")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            rows = services.sample(force=options["force"])
        except ServiceError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Recorded {rows} group(s)." if rows else "Not due: the last sample is recent.")
