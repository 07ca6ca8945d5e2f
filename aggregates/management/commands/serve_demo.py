import ctypes
import errno
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from aggregates.demo import seed as demo
from aggregates.mirroring import applier, outbox

DEFAULT_ADDR = "127.0.0.1:8000"
PORTS_TRIED = 20  # with the default address: 8000, then the next free port up to 8019

# The web server: gunicorn with the configuration file production uses, and
# two workers unless WEB_CONCURRENCY says otherwise (SQLite, one machine).
GUNICORN_CONF = Path(settings.BASE_DIR) / "config" / "gunicorn.conf.py"
DEMO_WEB_CONCURRENCY = "2"
READY_SECONDS = 120  # for gunicorn to answer its health check (a loaded machine may take tens of seconds)
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies

# Seconds before the first drain (the server is starting) and between drains.
FIRST_DRAIN_DELAY = 5.0
DRAIN_INTERVAL = 30.0


DEMO_FILTERS = [
    "ComputeFilter",
    "ImagePropertiesFilter",
    "AggregateInstanceExtraSpecsFilter",
    "AggregateMultiTenancyIsolation",
    "AggregateImagePropertiesIsolation",
    "AggregateIoOpsFilter",
    "AggregateNumInstancesFilter",
    "AggregateTypeAffinityFilter",
    "SameHostFilter",
    "DifferentHostFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
]


class Command(BaseCommand):
    help = (
        "Run Corral with demo data: migrate, seed the demo cloud, keep the demo hosts' "
        "agents reporting, and serve on ADDR (default 127.0.0.1:8000) with gunicorn. One SIGTERM (or "
        "Ctrl-C) stops everything it started."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "addr",
            nargs="?",
            default=None,
            help=f"[ADDR:]PORT to serve on (default {DEFAULT_ADDR}, or the next free port when 8000 is taken)",
        )
        parser.add_argument("--heartbeat-interval", type=float, default=10.0)

    def handle(self, *args: Any, addr: str | None, heartbeat_interval: float, **options: Any) -> None:
        addr = self._free_addr(addr)
        self._answer_to(addr.rpartition(":")[0])
        demo_settings: dict[str, str] = {}  # for the web server's processes too
        if not os.environ.get("CACHE_DRIVER"):
            # Image pre-caching works in the demo without host agents: a simulated cache per host.
            demo_settings["CACHE_DRIVER"] = "inprocess"
        if not os.environ.get("ENABLED_FILTERS"):
            # Every aggregate filter, so that the demo's aggregates steer scheduling.
            demo_settings["ENABLED_FILTERS"] = ",".join(DEMO_FILTERS)
        if not os.environ.get("ALLOW_RESIZE_TO_SAME_HOST"):
            # The demo's hosts are few: a resize may stay where it is (Nova's allow_resize_to_same_host).
            demo_settings["ALLOW_RESIZE_TO_SAME_HOST"] = "true"
        if not os.environ.get("AUTO_ASSIGN_FLOATING_IP"):
            # A floating address from the demo's "public" pool for every boot:
            # openstacksdk's and Ansible's defaults (auto_ip) want an external address.
            demo_settings["AUTO_ASSIGN_FLOATING_IP"] = "1"
            settings.AUTO_ASSIGN_FLOATING_IP = True
        if demo_settings:  # and for this one's (the seed and the demo hosts' thread)
            settings.CACHE_DRIVER = demo_settings.get("CACHE_DRIVER", settings.CACHE_DRIVER)
            if "ENABLED_FILTERS" in demo_settings:
                settings.ENABLED_FILTERS = DEMO_FILTERS
        call_command("migrate", interactive=False, verbosity=0)
        with outbox.left_to_the_drain():  # applied together below, failures summed up in one line
            call_command("seed_demo", verbosity=0, without_servers=True)
        # The servers need the hosts' placement providers: the seeding's
        # requests applied first (placement in this process), then the boots.
        applier.drain_pending()
        demo.seed_servers(out=lambda line: None)
        server = self._serve(addr, demo_settings)
        self._wait_until_serving(server, addr)
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
        self.stdout.flush()
        self._wait(server)

    def _serve(self, addr: str, demo_settings: dict[str, str]) -> "subprocess.Popen[bytes]":
        """Start gunicorn on ``addr`` with this process's settings (the demo's
        included): a child that dies with this process."""
        env = {
            **os.environ,
            **demo_settings,
            "ALLOWED_HOSTS": ",".join(settings.ALLOWED_HOSTS),
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
        }
        env.setdefault("WEB_CONCURRENCY", DEMO_WEB_CONCURRENCY)
        command = [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF), "-b", addr]
        # A process group of its own: a Ctrl-C in the terminal reaches this
        # process only, which stops gunicorn with one SIGTERM (its workers
        # would otherwise get the SIGINT too, on top of their master's signal).
        return subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, process_group=0, preexec_fn=_die_with_parent)

    @staticmethod
    def _wait_until_serving(server: "subprocess.Popen[bytes]", addr: str) -> None:
        """Return once gunicorn answers its health check on ``addr`` (so the
        "Corral is running" line is true when printed: a script reading it may
        call at once); raise if gunicorn exits or never answers."""
        host, _, port = addr.rpartition(":")
        if host.strip("[]") in ("0.0.0.0", "::"):
            host = "127.0.0.1" if host == "0.0.0.0" else "[::1]"
        url = f"http://{host}:{port}/healthcheck"
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise CommandError(
                    f"The web server (gunicorn) stopped with exit code {server.returncode}; its log is above."
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        server.terminate()
        raise CommandError(f"The web server (gunicorn) did not answer {url} within {READY_SECONDS} s.")

    def _wait(self, server: "subprocess.Popen[bytes]") -> None:
        """Serve until SIGTERM or SIGINT (Ctrl-C), then stop gunicorn (it lets
        the requests in flight finish) and return; a second signal stops it at
        once. The demo hosts' thread ends with this process."""
        signals: list[int] = []

        def stop(signum: int, frame: FrameType | None) -> None:
            signals.append(signum)
            if server.poll() is None:
                server.send_signal(signal.SIGTERM if len(signals) == 1 else signal.SIGQUIT)

        previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGTERM, signal.SIGINT)}
        try:
            code = server.wait()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        if not signals:
            raise CommandError(f"The web server (gunicorn) stopped with exit code {code}; its log is above.")

    @staticmethod
    def _answer_to(host: str) -> None:
        """Answer to the address served on too (ALLOWED_HOSTS holds the local
        names and this machine's own by default). A wildcard address (0.0.0.0,
        ::) adds nothing: other names need ALLOWED_HOSTS or PUBLIC_URL."""
        name = host if host.startswith("[") or ":" not in host else f"[{host}]"
        if host.strip("[]") in ("0.0.0.0", "::") or "*" in settings.ALLOWED_HOSTS:
            return
        if name.lower() not in (allowed.lower() for allowed in settings.ALLOWED_HOSTS):
            settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, name]

    def _free_addr(self, addr: str | None) -> str:
        """The address to serve on: the one asked for, which must be free; by
        default 127.0.0.1:8000, or the next free port when that is taken."""
        host, _, port = (addr or DEFAULT_ADDR).rpartition(":")
        host = host or "127.0.0.1"
        if not port.isdigit():
            raise CommandError(f"{addr!r} is not [ADDR:]PORT, e.g. 127.0.0.1:8080 or 8080")
        candidates = [int(port)] if addr else range(int(port), int(port) + PORTS_TRIED)
        for candidate in candidates:
            with socket.socket(socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as runserver: TIME_WAIT is free
                try:
                    probe.bind((host.strip("[]"), candidate))
                except OSError as exc:
                    if exc.errno != errno.EADDRINUSE:
                        raise CommandError(f"Cannot serve on {host}:{candidate}: {exc.strerror}") from exc
                    continue
            if candidate != int(port):
                self.stdout.write(f"Port {port} is taken; serving on {candidate} instead.")
            return f"{host}:{candidate}"
        if addr:
            raise CommandError(
                f"Port {port} on {host} is taken by another program: stop it, or run serve_demo with another "
                "port, e.g. `manage.py serve_demo 127.0.0.1:8080`."
            )
        raise CommandError(f"Ports {port} to {int(port) + PORTS_TRIED - 1} on {host} are all taken: give a free one.")

    def _agents(self, interval: float) -> None:
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
                    applier.drain_pending()  # failures: one summary line in the log
                except Exception as exc:  # noqa: BLE001 - keep serving
                    self.stderr.write(f"placement drain failed: {exc}")
            time.sleep(min(interval, max(next_drain - time.monotonic(), 0.1)))


def _die_with_parent() -> None:
    """In the web server's process, before it runs: have the kernel stop it
    (SIGTERM) should serve_demo die without stopping it (SIGKILL)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
