"""Corral as a small cluster on this machine, for the scale-out test
(tests/deployment/test_cluster.py) and its benchmark (bench/cluster_bench.py):
web nodes (gunicorn with config/gunicorn.conf.py, each on an address of its
own: 127.0.0.2, 127.0.0.3, ...; the whole of 127.0.0.0/8 reaches the
loopback interface, so no network namespace is needed for that) behind
Debian's HAProxy, which health-checks ``/healthcheck``; Celery workers and
beats; and a load of clients sending a mix of reads and writes through the
load balancer, counting every request that failed."""

import random
import socket
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from tests import provision
from tests.process_stack import PROJECT, VENV_BIN, Processes, wait_until

ADMIN = {"X-Auth-Token": "admin"}
PLACEMENT = {**ADMIN, "OpenStack-API-Version": "placement 1.28"}

# Balancer and web nodes as docs/deployment.md describes them: the balancer
# checks each node's /healthcheck every second (every quarter of a second
# once one failed, and while it is out), takes it out after two failures
# (an answer other than 200, or none within 10 s: a busy node is not a dead
# one) and back after two successes; gunicorn keeps an idle connection
# open longer than the balancer keeps one for reuse, so a request never
# races the node closing it.
HAPROXY_CONFIG = """\
global
    maxconn 1024

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 10s
    timeout check 10s
    retries 2
    option redispatch

frontend corral
    bind {bind}
    default_backend web

backend web
    balance roundrobin
    option httpchk
    http-check send meth GET uri /healthcheck
    http-check expect status 200
    default-server check inter 1s fastinter 250ms downinter 250ms fall 2 rise 2
{servers}

listen stats
    bind {stats}
    stats enable
    stats uri /stats
"""
WEB_ENV = {"WEB_KEEPALIVE": "75", "WEB_GRACEFUL_TIMEOUT": "20", "WEB_THREADS": "4"}


def free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


@dataclass
class WebNode:
    name: str
    address: str
    port: int
    disable_file: Path
    process: object = None

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"


class Cluster:
    """Web nodes behind HAProxy, workers and beats, started with ``processes``
    (whose environment names the shared database and Redis)."""

    def __init__(self, processes: Processes, nodes: int, web_concurrency: int = 1):
        self.processes = processes
        self.workdir: Path = processes.workdir
        self.web_concurrency = web_concurrency
        self.nodes = []
        for index in range(nodes):
            address = f"127.0.0.{index + 2}"
            name = f"web{index + 1}"
            self.nodes.append(WebNode(name, address, free_port(address), self.workdir / f"{name}.disabled"))
        self.balancer = None
        self.workers: dict[str, object] = {}

    # --- web nodes --------------------------------------------------------

    def start_web(self, node: WebNode) -> None:
        """Start the node's gunicorn and wait until its own /healthcheck answers 200."""
        self.launch_web(node)
        self.wait_web(node)

    def wait_web(self, node: WebNode) -> None:
        wait_until(lambda: requests.get(node.url + "/healthcheck", timeout=5).status_code == 200, 90, node.name)

    def launch_web(self, node: WebNode) -> None:
        """Start the node's gunicorn (not waiting for it)."""
        env = {
            **WEB_ENV,
            "WEB_CONCURRENCY": str(self.web_concurrency),
            "HEALTHCHECK_DISABLE_BY_FILE": str(node.disable_file),
            # The names clients use: the balancer's address, and each node's own (its health checks).
            "ALLOWED_HOSTS": ",".join(["127.0.0.1", *(n.address for n in self.nodes)]),
        }
        conf = str(PROJECT / "config" / "gunicorn.conf.py")
        node.process = self.processes.start(
            node.name, str(VENV_BIN / "gunicorn"), "-c", conf, "-b", f"{node.address}:{node.port}", env=env
        )

    def restart_web(self, node: WebNode, timeout: float = 60) -> dict[str, float]:
        """The documented rolling restart of one node: drain it (the disable
        file), wait until the balancer has taken it out, stop it (SIGTERM:
        requests in flight finish), start it again, wait until the balancer
        has it back. The seconds each step took."""
        steps, started = {}, time.monotonic()
        node.disable_file.touch()
        self.wait_state(node, "DOWN", timeout)
        steps["drained"] = time.monotonic() - started
        node.process.terminate()
        assert node.process.wait(timeout) == 0
        steps["stopped"] = time.monotonic() - started
        node.disable_file.unlink()
        self.start_web(node)
        self.wait_state(node, "UP", timeout)
        steps["back"] = time.monotonic() - started
        return steps

    # --- the balancer -----------------------------------------------------

    def start_balancer(self) -> str:
        """Start HAProxy in front of the nodes (every node UP); its URL."""
        self.port, self.stats_port = free_port("127.0.0.1"), free_port("127.0.0.1")
        servers = "\n".join(f"    server {n.name} {n.address}:{n.port}" for n in self.nodes)
        config = self.workdir / "haproxy.cfg"
        config.write_text(
            HAPROXY_CONFIG.format(bind=f"127.0.0.1:{self.port}", stats=f"127.0.0.1:{self.stats_port}", servers=servers)
        )
        self.balancer = self.processes.start("haproxy", provision.haproxy(), "-db", "-f", str(config))
        for node in self.nodes:
            self.wait_state(node, "UP", 60)
        return f"http://127.0.0.1:{self.port}"

    def states(self) -> dict[str, str]:
        """Each node's state as the balancer sees it (``UP``, ``DOWN``, ...)."""
        text = requests.get(f"http://127.0.0.1:{self.stats_port}/stats;csv", timeout=5).text
        lines = text.splitlines()
        header = lines[0].lstrip("# ").split(",")
        rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line]
        return {row["svname"]: row["status"] for row in rows if row["pxname"] == "web"}

    def wait_state(self, node: WebNode, state: str, timeout: float) -> None:
        wait_until(lambda: self.states().get(node.name, "").startswith(state), timeout, f"{node.name} {state}")

    # --- workers and beats ------------------------------------------------

    def start_worker(self, name: str):
        """A Celery worker (one task at a time), named ``name@<host>``."""
        worker = self.processes.start(
            name,
            str(VENV_BIN / "celery"),
            "-A",
            "config",
            "worker",
            "--pool",
            "solo",
            "--prefetch-multiplier",
            "1",
            "-n",
            f"{name}@%h",
            "-l",
            "info",
        )
        self.workers[name] = worker
        return worker

    def start_beat(self, name: str):
        return self.processes.start(name, str(VENV_BIN / "celery"), "-A", "config", "beat", "-l", "info")

    def log(self, name: str) -> str:
        return (self.workdir / f"{name}.log").read_text(errors="replace")


# --- the load --------------------------------------------------------------


@dataclass
class LoadResult:
    seconds: float
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return len(self.latencies) + len(self.failures)

    def summary(self) -> str:
        ordered = sorted(self.latencies) or [0.0]
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return (
            f"{self.requests} requests in {self.seconds:.1f} s: {self.requests / self.seconds:.1f}/s, "
            f"median {statistics.median(ordered) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
            f"{len(self.failures)} failed"
        )


class Load:
    """``clients`` threads, each with its own kept-alive connection to the
    balancer, sending a mix of the API's reads and writes until stopped:
    server and aggregate lists, flavors, images, placement's providers, and
    an aggregate created, read and deleted. A request fails when it raises
    (connection refused or reset, timeout) or answers another status than
    its operation's."""

    def __init__(self, url: str, clients: int = 8, seed: int = 0):
        self.url, self.clients = url, clients
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.result = LoadResult(0.0)
        self.threads = [threading.Thread(target=self._client, args=(i, seed), daemon=True) for i in range(clients)]

    def start(self) -> "Load":
        self.started = time.monotonic()
        for thread in self.threads:
            thread.start()
        return self

    def stop(self) -> LoadResult:
        self.stopping.set()
        for thread in self.threads:
            thread.join(120)
        self.result.seconds = time.monotonic() - self.started
        return self.result

    def _call(self, session, method, path, expected, **kwargs):
        started = time.monotonic()
        try:
            answer = session.request(method, self.url + path, timeout=60, **kwargs)
        except requests.RequestException as exc:
            with self.lock:
                self.result.failures.append(f"{method} {path}: {type(exc).__name__}: {exc}")
            return None
        took = time.monotonic() - started
        with self.lock:
            if answer.status_code == expected:
                self.result.latencies.append(took)
            else:
                self.result.failures.append(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
        return answer if answer.status_code == expected else None

    def _client(self, index: int, seed: int) -> None:
        session = requests.Session()
        session.headers.update(ADMIN)
        pick = random.Random(seed * 100 + index)
        reads = [
            ("/compute/v2.1/servers/detail", {}),
            ("/compute/v2.1/os-aggregates", {}),
            ("/compute/v2.1/flavors/detail", {}),
            ("/image/v2/images", {}),
            ("/placement/resource_providers", {"headers": PLACEMENT}),
        ]
        made = 0
        while not self.stopping.is_set():
            if pick.random() < 0.2:  # a write: an aggregate created, read and deleted
                made += 1
                body = {"aggregate": {"name": f"load-{seed}-{index}-{made}"}}
                created = self._call(session, "POST", "/compute/v2.1/os-aggregates", 200, json=body)
                if created is not None:
                    aggregate = created.json()["aggregate"]["id"]
                    self._call(session, "GET", f"/compute/v2.1/os-aggregates/{aggregate}", 200)
                    self._call(session, "DELETE", f"/compute/v2.1/os-aggregates/{aggregate}", 200)
            else:
                path, kwargs = pick.choice(reads)
                self._call(session, "GET", path, 200, **kwargs)
        session.close()
