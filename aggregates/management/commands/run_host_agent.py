"""``manage.py run_host_agent``: run the host agent of one compute host.

It registers the host through POST /compute/v2.1/os-host-registrations
(with its resources and its address), re-registers
every ``--heartbeat-interval`` seconds as its heartbeat, and serves Corral's
pre-caching requests (see ``aggregates.hostagent.server``). The agent is a
separate program that talks to Corral over HTTP only; this command just
starts it."""

import logging
import os
import signal
import sys
import time
from http.server import ThreadingHTTPServer
from types import FrameType
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aggregates.hostagent import resources
from aggregates.hostagent.cache import ImageCache
from aggregates.hostagent.client import CorralClient, CorralError
from aggregates.hostagent.server import HostAgent

TOKEN_VARIABLE = "CORRAL_AGENT_TOKEN"
SECRET_VARIABLE = "CORRAL_AGENT_SECRET"
CACHE_LIMIT_VARIABLE = "CORRAL_AGENT_CACHE_LIMIT"
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def cache_limit(value: str) -> int:
    """Bytes of ``value``: a whole number, optionally with K, M, G or T (powers of 1024)."""
    text = value.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (text[:-1], text[-1]) if text[-1:] in _UNITS and text[-1:] else (text, "")
    if not number.isdigit():
        raise CommandError(f"--cache-limit must be a size such as 500G, 800M or 0, not {value!r}")
    return int(number) * _UNITS[unit]


def _interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    raise KeyboardInterrupt


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise CommandError(f"--listen must be HOST:PORT, not {value!r}")
    return host.strip("[]"), int(port)


class Command(BaseCommand):
    help = "Run a compute host's agent: register and heartbeat with Corral, and pre-cache images on request."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", required=True, help="host name of this compute host's service")
        parser.add_argument("--listen", required=True, help="HOST:PORT the agent listens on (PORT 0: any free port)")
        parser.add_argument("--cache-dir", required=True, help="directory of the image cache")
        parser.add_argument("--corral-url", required=True, help="Corral's base URL, e.g. http://corral:8000")
        parser.add_argument("--token", help=f"Corral token of an admin (default: ${TOKEN_VARIABLE})")
        parser.add_argument(
            "--advertise-url",
            help="URL Corral reaches the agent at (default: http://HOST:PORT of --listen)",
        )
        parser.add_argument(
            "--secret",
            help=f"the secret Corral presents to agents, its AGENT_SHARED_SECRET setting (default: ${SECRET_VARIABLE})",
        )
        parser.add_argument(
            "--cache-limit",
            help="size past which the least recently used images that are not pinned are evicted, e.g. 500G "
            f"(K, M, G, T: powers of 1024; default ${CACHE_LIMIT_VARIABLE}, else 0: never evict)",
        )
        parser.add_argument("--vcpus", type=int, help="vCPUs to register (default: detected)")
        parser.add_argument("--memory-mb", type=int, help="memory in MiB to register (default: detected)")
        parser.add_argument("--disk-gb", type=int, help="disk in GiB to register (default: the cache's file system)")
        parser.add_argument("--host-ip", help="IP address of the host to register")
        parser.add_argument(
            "--heartbeat-interval", type=float, default=10.0, help="seconds between re-registrations (default 10)"
        )
        parser.add_argument(
            "--register-retries",
            type=int,
            default=10,
            help="attempts at the first registration while Corral is unreachable (default 10, 1 s apart)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        logging.basicConfig(level=logging.INFO if options["verbosity"] > 1 else logging.WARNING, stream=sys.stderr)
        token = options["token"] or os.environ.get(TOKEN_VARIABLE, "")
        if not token:
            raise CommandError(f"A Corral token is needed: --token or ${TOKEN_VARIABLE}")
        if options["heartbeat_interval"] <= 0:
            raise CommandError("--heartbeat-interval must be positive")
        for name in ("vcpus", "memory_mb", "disk_gb"):
            if options[name] is not None and options[name] < 0:
                raise CommandError(f"--{name.replace('_', '-')} must not be negative")
        secret = options["secret"] or os.environ.get(SECRET_VARIABLE, "")
        if not secret:
            raise CommandError(f"The agents' shared secret is needed: --secret or ${SECRET_VARIABLE}")
        cache = ImageCache(
            options["cache_dir"],
            limit_bytes=cache_limit(options["cache_limit"] or os.environ.get(CACHE_LIMIT_VARIABLE) or "0"),
        )
        registration: dict[str, Any] = {
            "host": options["host"],
            "vcpus": options["vcpus"] if options["vcpus"] is not None else resources.detect_vcpus(),
            "memory_mb": options["memory_mb"] if options["memory_mb"] is not None else resources.detect_memory_mb(),
            "local_gb": options["disk_gb"]
            if options["disk_gb"] is not None
            else resources.detect_disk_gb(cache.directory),
        }
        if options["host_ip"]:
            registration["host_ip"] = options["host_ip"]
        agent = HostAgent(
            host=options["host"],
            cache=cache,
            corral=CorralClient(options["corral_url"], token),
            secret=secret,
            registration=registration,
            heartbeat_interval=options["heartbeat_interval"],
        )
        try:
            server = agent.make_server(_address(options["listen"]))
        except OSError as exc:
            raise CommandError(f"Cannot listen on {options['listen']}: {exc}") from exc
        bound_host, bound_port = server.server_address[:2]
        registration["agent_url"] = options["advertise_url"] or f"http://{str(bound_host)}:{bound_port}"
        self._first_registration(agent, options["register_retries"], server)
        # SIGTERM (service managers) stops it as Ctrl-C does; SIGINT may be
        # ignored when it was started in the background. Before the line
        # saying it listens: whoever reads that line may stop it at once.
        signal.signal(signal.SIGTERM, _interrupt)
        try:
            self.stdout.write(
                f"Host agent of {options['host']} listening on {registration['agent_url']}, cache {cache.directory}"
            )
            self.stdout.flush()
            agent.serve(server)
        except KeyboardInterrupt:
            server.server_close()  # stopped before serving: serve() had nothing to close

    def _first_registration(self, agent: HostAgent, retries: int, server: ThreadingHTTPServer) -> None:

        for attempt in range(max(retries, 1)):
            try:
                agent.register()
                return
            except CorralError as exc:
                if exc.status is not None or attempt == max(retries, 1) - 1:
                    server.server_close()
                    raise CommandError(str(exc)) from exc
                time.sleep(1)
