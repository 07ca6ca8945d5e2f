import logging
from typing import Any

from django.core.management.base import BaseCommand

from aggregates.demo import seed as demo


class Command(BaseCommand):
    help = "Load the demo cloud (zones, aggregates, hosts, flavors, users). Running it again changes nothing."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--without-servers",
            action="store_true",
            help="leave out the demo's servers (for a caller that applies the seeding's placement requests later)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # Each registration and add_host logs an INFO line, and so does each
        # placement request they make (an operator's change does); a bulk load
        # of hundreds says so in one line here, or, with -v 2, one per object.
        loggers = [logging.getLogger(name) for name in ("aggregates", "placement")]
        saved = [logger.level for logger in loggers]
        if options["verbosity"] < 3:
            for logger in loggers:
                logger.setLevel(max(logging.WARNING, logger.getEffectiveLevel()))
        try:
            created = demo.seed(
                out=lambda line: self.stdout.write(line) if options["verbosity"] > 1 else None,
                servers=not options["without_servers"],
            )
        finally:
            for logger, level in zip(loggers, saved, strict=True):
                logger.setLevel(level)
        self.stdout.write(f"Demo cloud ready ({len(created)} objects created).")
