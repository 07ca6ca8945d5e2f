from typing import Any

from django.core.management.base import BaseCommand

from aggregates.demo import seed as demo


class Command(BaseCommand):
    help = "Load the demo cloud (zones, aggregates, hosts, flavors, users). Running it again changes nothing."

    def handle(self, *args: Any, **options: Any) -> None:
        created = demo.seed(out=lambda line: self.stdout.write(line) if options["verbosity"] > 1 else None)
        self.stdout.write(f"Demo cloud ready ({len(created)} objects created).")
