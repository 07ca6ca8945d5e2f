"""``manage.py liveness worker|beat``: exit 0 when the process is alive, 1
when not (one line on stdout says why), for a process manager's probe."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aggregates.health import liveness


class Command(BaseCommand):
    help = "Exit 0 when a Celery worker answers a ping (worker) or the beat's heartbeat is recent (beat), else 1."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("process", choices=["worker", "beat"])
        parser.add_argument("--name", help="the worker's node name (default: celery@<this host name>)")
        parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the worker's answer")
        parser.add_argument("--max-age", type=float, help="seconds (default BEAT_HEARTBEAT_MAX_AGE)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["process"] == "worker":
            alive, why = liveness.worker_alive(options["name"], options["timeout"])
        else:
            alive, why = liveness.beat_alive(options["max_age"])
        if not alive:
            raise CommandError(f"{options['process']} not alive: {why}", returncode=1)
        self.stdout.write(f"{options['process']} alive: {why}")
