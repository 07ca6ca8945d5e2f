import threading
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from aggregates import demo, mirroring

# Seconds before the first drain (the server is starting) and between drains.
FIRST_DRAIN_DELAY = 5.0
DRAIN_INTERVAL = 30.0


class Command(BaseCommand):
    help = ("Run Corral with demo data: migrate, seed the demo cloud, keep the demo hosts' "
            "agents reporting, and serve on ADDR (default 127.0.0.1:8000).")

    def add_arguments(self, parser):
        parser.add_argument("addr", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--heartbeat-interval", type=float, default=10.0)

    def handle(self, *args, addr, heartbeat_interval, **options):
        call_command("migrate", interactive=False, verbosity=0)
        with mirroring.left_to_the_drain():  # placement is not served yet: the drain thread applies the rows
            call_command("seed_demo", verbosity=0)
        thread = threading.Thread(target=self._agents, args=(heartbeat_interval,), daemon=True)
        thread.start()
        url = f"http://{addr}/"
        self.stdout.write(self.style.SUCCESS(f"\nCorral is running at {url}"))
        self.stdout.write(f"  database: {settings.DATABASES['default']['NAME']}")
        self.stdout.write(f"  compute API: {url}compute/v2.1   identity: {url}identity/v3   placement: {url}placement")
        self.stdout.write("  log in (console and API; project admin/demo):")
        for username, role, project, _ in demo.USERS:
            self.stdout.write(f"    {username:<7} / {demo.DEMO_PASSWORD}   role {role} on project {project}")
        self.stdout.write("")
        call_command("runserver", addr, use_reloader=False, insecure_serving=True)

    def _agents(self, interval):
        """Stand in for the demo hosts' agents: a heartbeat every ``interval``
        seconds. With no Celery worker running the beat schedule, also apply
        the pending placement requests every DRAIN_INTERVAL seconds (those
        written while seeding, before placement was served, at first)."""
        next_drain = time.monotonic() + FIRST_DRAIN_DELAY
        while True:
            try:
                demo.heartbeat()
            except Exception as exc:  # keep serving even if one beat fails
                self.stderr.write(f"demo heartbeat failed: {exc}")
            if time.monotonic() >= next_drain:
                next_drain = time.monotonic() + DRAIN_INTERVAL
                try:
                    mirroring.drain_pending()  # failures: one summary line in the log
                except Exception as exc:  # noqa: BLE001 - keep serving
                    self.stderr.write(f"placement drain failed: {exc}")
            time.sleep(min(interval, max(next_drain - time.monotonic(), 0.1)))
