"""Placement side by side, on data that looks like a real cloud, under the
background load of compute reports.

    .venv/bin/python bench/placement_realistic.py --providers 10000 --aggregates 500 \\
        --db postgres --rounds 2 --workdir /tmp/pr-10k --json /tmp/pr-10k/result.json

Two servers (A: upstream Placement 16.0.0 under gunicorn, B: Corral's
placement under gunicorn; 2 sync workers each, the same database engine),
each set up on an empty database of its own and built with the shared
workload (``/work/shared/bench/placement_load.py --phase build``: N compute
nodes, K aggregates, sharing providers, about 3 consumers a node), then made
realistic the same way over HTTP:

- servers on every host: small consumers (1 VCPU, 128 MB) added until each
  compute node that is not full holds --servers-per-host consumers (17);
- nested providers where Nova makes them: every --nested-every-th (50) node
  gets two NUMA-cell children without inventory and a physical-GPU child
  with 16 VGPU;
- both databases ANALYZEd (PostgreSQL; ``ANALYZE`` on SQLite too).

Then every query round runs before any claim, as ``compare.py`` does, so
that every round's queries, on every side, see identical data: for each
round, each side in turn (A, B, A, B...): the query phase alone, then the
query phase again while --report-clients threads replay nova-compute's
periodic reads (each provider's inventories, allocations, aggregates and
traits, provider after provider) as fast as this machine lets them, capped
at --report-rate requests/s (a real region sends 4 x N / 60 a second:
about 667/s at 10,000 providers; the rate reached is recorded). Then, for
each round, each side in turn: the claim phase (claims, hot-spot claims,
aggregate updates, with placement_load's overcommit and lost-update
checks) under the same background reads. Every figure carries the
1-minute load average read before it.

Sides (--sides): ``upstream``, ``corral`` (this tree) or ``corral@PATH``
(Corral from another checkout, e.g. the code before a change: old code
against new code on identical data). More than two sides run in turn
(A, B, C, A, B, C...) and are compared with the first.

Each side runs under 2 gunicorn sync workers (one request at a time each,
every connection closed after its answer, as upstream is deployed under
uwsgi: processes without threads answering ``Connection: close``). A side named
with ``+gthread`` (``corral+gthread``, ``upstream+gthread``) runs under
the server settings Corral ships (config/gunicorn.conf.py): the same 2
workers with 4 threads each, connections kept alive 5 s. With --reuse, such
a side whose cloud was not built gets a copy of its sync twin's cloud
(``corral``'s for ``corral+gthread``; on PostgreSQL ``CREATE DATABASE ...
TEMPLATE``, on SQLite a copy of the file), so that both start from
identical data.

Output: a table per metric (p50 for queries, rates for writes) with the
median of each side over rounds and each side over the first, plus
everything in --json.
"""

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
from databases import recreate  # bench/databases.py, beside this script
from shipped_server import threaded_options  # bench/shipped_server.py

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SHARED_BENCH", "/work/shared/bench"))
LOAD = SHARED / "placement_load.py"
NAMESPACE = uuid.UUID("9f0c6b7e-2f55-4c1e-9c63-6d1f2b0a7c11")
HEADERS = {"x-auth-token": "admin", "OpenStack-API-Version": "placement 1.39", "content-type": "application/json"}
QUERY_METRICS = ("a_ac_limit1000", "b_ac_member_of3", "c_ac_required_gpu", "d_ac_nolimit")


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load1():
    return round(os.getloadavg()[0], 2)


# A side named so runs under the server settings Corral ships (threads in
# each worker, connections kept alive: bench/shipped_server.py).
GTHREAD = "+gthread"


class Side:
    def __init__(self, name, setup, start, port, workdir, database, twin=None):
        self.name, self.setup_cmd, self.start_cmd, self.port = name, setup, start, port
        self.workdir, self.database = workdir, database
        self.twin = twin  # the side whose built cloud this one may copy (its sync twin)
        self.url = f"http://127.0.0.1:{port}"
        self.process = None

    def setup(self):
        self.workdir.mkdir(parents=True, exist_ok=True)
        subprocess.run(self.setup_cmd.format(workdir=self.workdir), shell=True, check=True, cwd=SHARED)

    def start(self):
        log(f"{self.name}: starting")
        self.process = subprocess.Popen(
            self.start_cmd.format(workdir=self.workdir, port=self.port),
            shell=True,
            cwd=SHARED,
            start_new_session=True,
            stdout=open(self.workdir / "server.log", "a"),  # noqa: SIM115 - lives as long as the server
            stderr=subprocess.STDOUT,
        )
        for _ in range(600):
            try:
                if requests.get(self.url + "/", timeout=5).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise SystemExit(f"{self.name} did not start")

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)


def placement_load(side, args, phase, out, extra=()):
    command = [
        sys.executable,
        str(LOAD),
        "--url",
        side.url,
        "--providers",
        str(args.providers),
        "--aggregates",
        str(args.aggregates),
        "--phase",
        phase,
        "--json",
        str(out),
        *extra,
    ]
    run = subprocess.run(command, capture_output=True, text=True)
    (out.parent / (out.stem + ".log")).write_text(run.stdout + run.stderr)
    if run.returncode not in (0, 3):
        raise SystemExit(f"{side.name} {phase} failed ({run.returncode}): {run.stderr[-2000:]}")
    return json.loads(out.read_text()), run.returncode


# --- making the data realistic ----------------------------------------------------


def compute_nodes(session, url):
    providers = session.get(f"{url}/resource_providers", headers=HEADERS, timeout=600).json()["resource_providers"]
    return sorted((p for p in providers if p["name"].startswith("bench-cn-")), key=lambda p: p["name"])


def write(session, side, method, url, body, what, ok=(200, 201, 204)):
    """A write the build needs, tried up to eight times: upstream on SQLite
    answers 500 "database is locked" when its two workers write at once."""
    for _ in range(8):
        r = session.request(method, f"{side.url}{url}", json=body, headers=HEADERS, timeout=600)
        if r.status_code in ok:
            return r
        time.sleep(0.2)
    raise SystemExit(f"{side.name}: {what}: {r.status_code} {r.text[:300]}")


def realistic(side, args):
    """Servers on every host and nested providers, over the API."""
    session = requests.Session()
    nodes = compute_nodes(session, side.url)
    started = time.monotonic()

    def nest(node):
        s = requests.Session()
        for child in ("numa0", "numa1", "pci_0000_84_00_0"):
            child_uuid = str(uuid.uuid5(NAMESPACE, f"{node['uuid']}/{child}"))
            body = {"name": f"{node['name']}_{child}", "uuid": child_uuid, "parent_provider_uuid": node["uuid"]}
            write(s, side, "POST", "/resource_providers", body, "nested provider", ok=(200, 201, 409))
            if child.startswith("pci"):
                inv = {"resource_provider_generation": 0, "inventories": {"VGPU": {"total": 16}}}
                url = f"/resource_providers/{child_uuid}/inventories"
                write(s, side, "PUT", url, inv, "GPU inventory", ok=(200, 409))

    nested = nodes[:: args.nested_every] if args.nested_every > 0 else []
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(nest, nested))
    log(f"{side.name}: {len(nested)} nodes with nested providers")

    def usages(node):
        r = session.get(f"{side.url}/resource_providers/{node['uuid']}/allocations", headers=HEADERS, timeout=600)
        return node, len(r.json()["allocations"])

    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(usages, nodes))
    consumers = []
    for node, have in counts:
        r = session.get(f"{side.url}/resource_providers/{node['uuid']}/usages", headers=HEADERS, timeout=600)
        if r.json()["usages"].get("VCPU", 0) >= 256:
            continue  # a full host keeps what it has
        for i in range(max(0, args.servers_per_host - have)):
            consumers.append((str(uuid.uuid5(NAMESPACE, f"{node['uuid']}/server/{i}")), node["uuid"]))
    batches = [consumers[i : i + 50] for i in range(0, len(consumers), 50)]

    def post(batch):
        s = requests.Session()
        body = {
            c: {
                "allocations": {rp: {"resources": {"VCPU": 1, "MEMORY_MB": 128}}},
                "project_id": "realistic-servers",
                "user_id": "realistic-user",
                "consumer_generation": None,
                "consumer_type": "INSTANCE",
            }
            for c, rp in batch
        }
        write(s, side, "POST", "/allocations", body, "servers", ok=(204,))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(post, batches))
    log(f"{side.name}: {len(consumers)} server consumers added in {time.monotonic() - started:.0f} s")
    return {"nested_nodes": len(nested), "servers_added": len(consumers), "seconds": round(time.monotonic() - started)}


def database_url(workdir):
    """The database a side's setup wrote down (Corral: database_url; upstream: placement.conf)."""
    url_file = workdir / "database_url"
    if url_file.exists():
        return url_file.read_text().strip()
    conf = workdir / "placement.conf"
    line = next(line for line in conf.read_text().splitlines() if line.startswith("connection"))
    return line.split("=", 1)[1].strip().replace("postgresql+psycopg2", "postgres")


def copy_cloud(twin, side):
    """``side`` gets a copy of the cloud ``twin`` built: its work directory
    (the database's name or file rewritten) and its database."""
    if side.workdir.exists():
        shutil.rmtree(side.workdir)
    shutil.copytree(twin.workdir, side.workdir, ignore=shutil.ignore_patterns("server.log"))
    old = database_url(twin.workdir)
    if old.startswith("sqlite"):
        old_name, new_name = str(twin.workdir), str(side.workdir)
    else:
        old_name, new_name = old.rsplit("/", 1)[1], side.database
        recreate(f"{old.rsplit('/', 1)[0]}/{new_name}", template=old_name)
    for name in ("database_url", "placement.conf"):
        path = side.workdir / name
        if path.exists():
            path.write_text(path.read_text().replace(old_name, new_name))


def analyze(side, args):
    url = database_url(side.workdir)
    if url.startswith("sqlite"):
        import sqlite3

        with sqlite3.connect(url.split("///", 1)[1]) as db:
            db.execute("ANALYZE")
    else:
        import psycopg

        with psycopg.connect(url.replace("postgres://", "postgresql://"), autocommit=True) as conn:
            conn.execute("ANALYZE")


# --- nova-compute's periodic reads -----------------------------------------------------


class Reports:
    """--report-clients threads reading, provider after provider, what a
    nova-compute reads about its own provider tree each minute."""

    PATHS = ("inventories", "allocations", "aggregates", "traits")

    def __init__(self, side, nodes, args):
        self.url, self.nodes, self.args = side.url, nodes, args
        self.stop_event = threading.Event()
        self.count = 0
        self.errors = 0
        self.latencies = []
        self.lock = threading.Lock()
        self.threads = []

    def start(self):
        self.started = time.monotonic()
        per_thread = self.args.report_rate / max(1, self.args.report_clients)
        for t in range(self.args.report_clients):
            thread = threading.Thread(target=self.loop, args=(t, per_thread), daemon=True)
            thread.start()
            self.threads.append(thread)

    def loop(self, offset, per_thread):
        session = requests.Session()
        rng = random.Random(offset)
        interval = 1.0 / per_thread if per_thread > 0 else 0
        next_at = time.monotonic()
        while not self.stop_event.is_set():
            node = self.nodes[rng.randrange(len(self.nodes))]
            for path in self.PATHS:
                if self.stop_event.is_set():
                    return
                t0 = time.perf_counter()
                try:
                    r = session.get(f"{self.url}/resource_providers/{node}/{path}", headers=HEADERS, timeout=600)
                    ok = r.status_code == 200
                except requests.RequestException:
                    ok = False
                with self.lock:
                    self.count += 1
                    self.errors += 0 if ok else 1
                    self.latencies.append(time.perf_counter() - t0)
                next_at += interval
                delay = next_at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                else:
                    next_at = time.monotonic()

    def finish(self):
        self.stop_event.set()
        for thread in self.threads:
            thread.join()
        seconds = time.monotonic() - self.started
        lat = sorted(self.latencies) or [0.0]
        return {
            "requests": self.count,
            "errors": self.errors,
            "per_second": round(self.count / seconds, 1),
            "p50_ms": round(lat[len(lat) // 2] * 1000, 1),
        }


# --- rounds ------------------------------------------------------------------------------


def figures(query, claim=None):
    out = {}
    for metric in QUERY_METRICS if query else ():
        entry = query["query"][metric]
        out[metric] = entry.get("p50_ms", entry.get("p50"))
        out[metric + "_results"] = entry.get("result_count_median")
    if claim:
        c = claim["claim"]
        out["claims_per_s"] = c["claim_uniform"]["claims_per_s"]
        out["agg_updates_per_s"] = c["agg_update"]["ops_per_s"]
        out["correct"] = bool(c["verify"]["ok"] and not c["agg_update"]["problems"])
    return out


def query_round(side, args, r, nodes, outdir):
    """The query phase alone, then under the background reports."""
    result = {"load_before_quiet": load1()}
    quiet, _ = placement_load(side, args, "query", outdir / f"{side.name}-r{r}-quiet.json", args.load_arg)
    result["quiet"] = figures(quiet)
    result["load_before_loaded"] = load1()
    reports = Reports(side, nodes, args)
    reports.start()
    try:
        loaded, _ = placement_load(side, args, "query", outdir / f"{side.name}-r{r}-loaded.json", args.load_arg)
    finally:
        result["reports"] = reports.finish()
    result["loaded"] = figures(loaded)
    return result


def claim_round(side, args, r, nodes, outdir):
    """The claim phase (claims, hot-spot claims, aggregate updates) under
    the background reports."""
    result = {"load_before_claims": load1()}
    reports = Reports(side, nodes, args)
    reports.start()
    try:
        claim, code = placement_load(
            side, args, "claim", outdir / f"{side.name}-r{r}-claim.json", [*args.load_arg, "--round", str(r)]
        )
    finally:
        result["claim_reports"] = reports.finish()
    result["claims"] = figures(None, claim)
    result["claim_exit"] = code
    result["load_after"] = load1()
    return result


def summary(results, a, others):
    """Per metric: every side's figure per round and each other side's
    median over the first side's (``a``)."""
    rows = []
    keys = [("quiet", m) for m in QUERY_METRICS] + [("loaded", m) for m in QUERY_METRICS]
    keys += [("claims", "claims_per_s"), ("claims", "agg_updates_per_s")]
    for mode, metric in keys:
        row = {"mode": mode, "metric": metric}
        for name in (a, *others):
            row[name] = [r[mode][metric] for r in results[name]]
        ma = statistics.median(row[a])
        for name in others:
            row[f"{name}_over_{a}"] = round(statistics.median(row[name]) / ma, 3) if ma else None
        rows.append(row)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--providers", type=int, default=10000)
    parser.add_argument("--aggregates", type=int, default=None)
    parser.add_argument("--db", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--servers-per-host", type=int, default=17)
    parser.add_argument("--nested-every", type=int, default=50)
    parser.add_argument("--report-clients", type=int, default=4)
    parser.add_argument("--report-rate", type=float, default=100.0, help="cap of the background reads, requests/s")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/placement-realistic"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--upstream-venv", default=str(ROOT.parent / "main/var/upstream-placement-venv"))
    parser.add_argument("--python", default=sys.executable, help="the Python of Corral's venv")
    parser.add_argument(
        "--sides",
        default="upstream,corral",
        help="A,B[,C]: upstream, corral, corral@PATH (corral,corral: noise); "
        "+gthread after a side: under the server settings Corral ships (threads, keep-alive)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep a side's cloud built by an earlier run in the same --workdir (--rounds 0 builds only); "
        "only a cloud no claim round has changed: claims change each side's data differently",
    )
    parser.add_argument("--port-base", type=int, default=28400, help="the sides listen on this port and the next")
    parser.add_argument("--pg-prefix", default="realistic", help="database names: <prefix>_<side>_<n>")
    parser.add_argument(
        "--load-arg", action="append", default=[], help="passed to placement_load.py (e.g. --load-arg=--reps=10)"
    )
    args = parser.parse_args()
    if args.aggregates is None:
        args.aggregates = max(1, args.providers // 20)
    if args.db == "postgres" and "--usages-microversion=1.37" not in args.load_arg:
        args.load_arg.append("--usages-microversion=1.37")  # upstream answers 500 at 1.38+ on PostgreSQL
    args.workdir.mkdir(parents=True, exist_ok=True)
    names = args.sides.split(",")
    sides = []
    by_spec = {}
    for index, spec in enumerate(names):
        threaded = spec.endswith(GTHREAD)
        name, _, tree = spec.removesuffix(GTHREAD).partition("@")
        root = Path(tree).resolve() if tree else ROOT
        label = f"{name}-{root.name}" if tree else name
        if names.count(spec) > 1:
            label = f"{name}{index}"
        label += "-gthread" if threaded else ""
        workdir = args.workdir / label
        db = f"{args.pg_prefix}_{label}_{args.providers}".replace("-", "_").replace(".", "_")
        if name == "upstream":
            url = "sqlite" if args.db == "sqlite" else f"postgresql+psycopg2://postgres@127.0.0.1/{db}"
            env = f"VENV={args.upstream_venv}"
            setup = f"{env} ./upstream_placement.sh setup {{workdir}} {url}"
            start = f"{env} ./upstream_placement.sh start {{workdir}} {{port}}"
        else:
            url = "sqlite" if args.db == "sqlite" else f"postgres://postgres@127.0.0.1:5432/{db}"
            env = f"PYTHON={args.python} PYTHONPATH={root}"
            setup = f"{env} {root}/bench/corral_placement.sh setup {{workdir}} {url}"
            start = f"{env} {root}/bench/corral_placement.sh start {{workdir}} {{port}}"
        if threaded:
            start = f"GUNICORN_CMD_ARGS='{' '.join(threaded_options())}' {start}"
        twin = by_spec.get(spec.removesuffix(GTHREAD))
        side = Side(label, setup, start, args.port_base + index, workdir, db, twin=twin)
        by_spec[spec] = side
        sides.append(side)
    output = {"meta": {"providers": args.providers, "aggregates": args.aggregates, "db": args.db, "args": vars(args)}}
    output["meta"]["args"] = {k: str(v) for k, v in vars(args).items()}
    try:
        for side in sides:
            built = side.workdir / "built.json"
            if args.reuse and not built.exists() and side.twin and (side.twin.workdir / "built.json").exists():
                log(f"{side.name}: a copy of {side.twin.name}'s cloud")
                copy_cloud(side.twin, side)
            if args.reuse and built.exists():
                log(f"{side.name}: reusing the cloud built before")
                output.setdefault("build", {})[side.name] = json.loads(built.read_text())
                continue
            side.setup()
            side.start()
            log(f"{side.name}: build (load {load1()})")
            build, _ = placement_load(side, args, "build", args.workdir / f"{side.name}-build.json", args.load_arg)
            output.setdefault("build", {})[side.name] = {"seconds": build["build"].get("total_s")}
            output.setdefault("realistic", {})[side.name] = realistic(side, args)
            analyze(side, args)
            side.stop()
            built.write_text(json.dumps(output["build"][side.name]))
        nodes = {}
        results = {side.name: [] for side in sides}
        # Every query round before any claim: the queries of every round and
        # side see the same data (the claims change it).
        for r in range(args.rounds):
            for side in sides:
                side.start()
                if side.name not in nodes:
                    nodes[side.name] = [p["uuid"] for p in compute_nodes(requests.Session(), side.url)]
                log(f"round {r} {side.name}: queries (load {load1()})")
                results[side.name].append(query_round(side, args, r, nodes[side.name], args.workdir))
                side.stop()
                log(f"round {r} {side.name}: {json.dumps(results[side.name][-1])}")
        for r in range(args.rounds):
            for side in sides:
                side.start()
                log(f"round {r} {side.name}: claims (load {load1()})")
                results[side.name][r].update(claim_round(side, args, r, nodes[side.name], args.workdir))
                side.stop()
                log(f"round {r} {side.name}: {json.dumps(results[side.name][r]['claims'])}")
        output["rounds"] = results
        if len(sides) >= 2 and args.rounds > 0:
            first, others = sides[0].name, [side.name for side in sides[1:]]
            output["summary"] = summary(results, first, others)
            for row in output["summary"]:
                ratios = " ".join(f"{name}/{first}={row[f'{name}_over_{first}']}" for name in others)
                values = " ".join(f"{side.name}={row[side.name]}" for side in sides)
                print(f"{row['mode']:7} {row['metric']:20} {values} {ratios}")
    finally:
        for side in sides:
            side.stop()
        if args.json:
            args.json.write_text(json.dumps(output, indent=1))
    bad = [name for name, rounds in output.get("rounds", {}).items() if any(not r["claims"]["correct"] for r in rounds)]
    if bad:
        print(f"CORRECTNESS FAILED on {bad}")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
