"""The layout's rules, checked on every test run: no import cycle among
Corral's modules (an import inside a function counts: it still ties the two
modules), the import contracts of pyproject.toml, placement called through
its client's methods only, and every stored beat schedule naming a task the
Celery app knows."""

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from django_celery_beat.models import PeriodicTask

from config.celery import app as celery_app

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("aggregates", "placement", "dashboard", "config")


def import_cycles(graph):
    """The strongly connected components of more than one module (or a
    module importing itself), by Tarjan's algorithm, iteratively."""
    index, low, on_stack, stack, cycles, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            module, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    advanced = True
                    break
                if child in on_stack:
                    low[module] = min(low[module], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1 or graph.direct_import_exists(importer=module, imported=module):
                    cycles.append(sorted(component))
    return cycles


@pytest.fixture(scope="module")
def import_graph():
    return grimp.build_graph(*PACKAGES, include_external_packages=False)


def test_no_import_cycle_among_corrals_modules(import_graph):
    cycles = import_cycles(import_graph)
    details = []
    for cycle in cycles:
        members = set(cycle)
        edges = [
            f"{a} -> {b}"
            for a in cycle
            for b in sorted(import_graph.find_modules_directly_imported_by(a))
            if b in members
        ]
        details.append("\n  ".join(edges))
    assert not cycles, "import cycles:\n  " + "\n\n  ".join(details)


def test_cycle_finder_finds_a_cycle():
    """The check above can fail: a graph with a lazy import closing a loop."""
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")  # e.g. inside a function
    assert import_cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_imports_inside_functions_are_in_the_graph(import_graph, tmp_path, monkeypatch):
    (tmp_path / "lazy").mkdir()
    (tmp_path / "lazy" / "__init__.py").write_text("")
    (tmp_path / "lazy" / "one.py").write_text("def f():\n    from lazy import two\n")
    (tmp_path / "lazy" / "two.py").write_text("from lazy import one\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("lazy", cache_dir=None)
    assert import_cycles(graph) == [["lazy.one", "lazy.two"]]


def test_import_contracts_hold():
    """`lint-imports` with the contracts of pyproject.toml (placement apart,
    api -> services -> models, the console off the API layer...)."""
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


# --- placement is called through the methods of its client only --------------------------

HTTP_METHODS = {"GET", "HEAD", "PUT", "POST", "PATCH", "DELETE"}
# The placement client's own: what it sends and how it reads errors.
CLIENT_PRIVATE_NAMES = {"_send", "_read", "_error", "_conflict", "_read_modify_write", "_token_provider"}
CLIENT_PACKAGE = "aggregates/placement_client/"


def _placement_path(node):
    """Whether ``node`` is a path of the client's base URL: "/...", f"/...", "/..." + ..."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _placement_path(node.left)
    if isinstance(node, ast.JoinedStr) and node.values:
        return _placement_path(node.values[0])
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("/")


def raw_placement_requests(source):
    """(line, what) of each raw placement request in ``source``: a call
    ``<anything>.request("<METHOD>", "/path", ...)`` (the client's request),
    or one of the client's private names used on anything but self."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "request":
            method, *rest = node.args or [None]
            if isinstance(method, ast.Constant) and method.value in HTTP_METHODS and rest and _placement_path(rest[0]):
                found.append((node.lineno, f'.request("{method.value}", ...)'))
        elif isinstance(node, ast.Attribute) and node.attr in CLIENT_PRIVATE_NAMES:
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append((node.lineno, f".{node.attr}"))
    return sorted(found)


def test_placement_is_called_through_its_clients_methods_only():
    """Outside aggregates/placement_client/, no code sends placement a
    request of its own (method, path, hand-typed microversion) or reads its
    answer with the client's private helpers: each operation is one method
    of the client, at the microversion its table names."""
    found = {}
    for folder in ("aggregates", "dashboard", "config", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if not name.startswith(CLIENT_PACKAGE):
                found[name] = raw_placement_requests(path.read_text())
    unexpected = {name: hits for name, hits in found.items() if hits}
    assert not unexpected, "raw placement requests outside the client (give the client a method):\n" + "\n".join(
        f"  {name}:{line} {what}" for name, hits in sorted(unexpected.items()) for line, what in hits
    )


def test_the_raw_request_finder_finds_them():
    """The check above can fail: the scheduler's claim and release as they
    were written before the client had methods for them."""
    source = """
def _claim(placement, consumer_uuid, body):
    response = placement.request("PUT", f"/allocations/{consumer_uuid}", "1.38", body=body)
    if response.status_code != 204:
        raise placement._error(response, f"Claiming resources for {consumer_uuid}")

def release(consumer_uuid):
    client().request("DELETE", "/allocations/" + consumer_uuid, "1.28")

def not_placement(self, url):
    self._error(404, "Not found.")
    return requests.request("GET", url, timeout=3)
"""
    assert raw_placement_requests(source) == [
        (3, '.request("PUT", ...)'),
        (5, "._error"),
        (8, '.request("DELETE", ...)'),
    ]


def store_the_migrations_schedules():
    """Run the data migrations that store beat schedules, forwards, as a
    fresh database gets them (tests that flush tables may have removed them)."""
    from django.apps import apps

    for name in ("0003_placement_mirroring_schedules", "0005_stable_task_names"):
        migration = importlib.import_module(f"aggregates.migrations.{name}").Migration
        for operation in migration.operations:
            operation.code(apps, None)


def unregistered_schedules():
    """(schedule name, task name) of the stored schedules whose task the
    Celery app does not know."""
    celery_app.loader.import_default_modules()
    registered = set(celery_app.tasks)
    return [(name, task) for name, task in PeriodicTask.objects.values_list("name", "task") if task not in registered]


@pytest.mark.django_db
def test_every_stored_beat_schedule_names_a_registered_task():
    store_the_migrations_schedules()
    assert PeriodicTask.objects.count() >= 2, "the migrations store the mirroring's schedules"
    assert unregistered_schedules() == []


@pytest.mark.django_db
def test_a_schedule_naming_an_unknown_task_is_caught():
    """The check above can fail: a schedule stored under a task's old name."""
    store_the_migrations_schedules()
    schedule = PeriodicTask.objects.order_by("name").first()
    schedule.task = "aggregates.tasks.drain_mirror_requests"  # its name before the tasks moved
    schedule.save()
    assert unregistered_schedules() == [(schedule.name, "aggregates.tasks.drain_mirror_requests")]


def corral_sources():
    """(path relative to the root, text) of every Python module of Corral's packages."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text()


PRIVATE_ENGINE_NAME = re.compile(r"\bengine\._\w|from aggregates\.scheduling\.engine import [^\n]*\b_\w")


def test_one_scheduler_decides():
    """Maintenance plans with the scheduler's own decision (``engine.decide``),
    not a copy of it, and nothing outside the scheduling package reaches
    for a private name of its engine."""
    copies = [
        path for path, text in corral_sources() if path.startswith("aggregates/maintenance/") and "_decide" in text
    ]
    private = [
        path
        for path, text in corral_sources()
        if not path.startswith("aggregates/scheduling/") and PRIVATE_ENGINE_NAME.search(text)
    ]
    assert (copies, private) == ([], [])


def test_one_after_commit_dispatcher():
    """Work that follows a commit goes through ``aggregates/after_commit.py``
    (sent to a worker, or run here without a broker): no other module
    registers an on_commit hook of its own."""
    hooks = [
        path
        for path, text in corral_sources()
        if path != "aggregates/after_commit.py" and re.search(r"\bon_commit\(", text)
    ]
    assert hooks == []
