"""The web role as deployed: gunicorn with the repository's configuration
file (config/gunicorn.conf.py). Its workers come from WEB_CONCURRENCY, its
access log names each request's id, and a restart (SIGHUP) or a stop
(SIGTERM) lets a request in flight finish."""

import os
import re
import signal
import threading
import time

import pytest
import requests

from tests.plugins.upstream_placement import free_port
from tests.process_stack import PROJECT, VENV_BIN, Processes, alive, descendants, wait_until

pytestmark = pytest.mark.processes

ADMIN = {"X-Auth-Token": "admin"}


@pytest.fixture
def web(tmp_path):
    """Migrate (a step of its own), then start gunicorn with the configuration file and two workers."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_", "DATABASE_", "WEB_"))},
        "CORRAL_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path}/corral.sqlite3",
        "AUTH_STRATEGY": "noauth2",
        "PLACEMENT_URL": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "WEB_CONCURRENCY": "2",
        "WEB_GRACEFUL_TIMEOUT": "20",
    }
    processes = Processes(tmp_path, env)
    try:
        processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
        port = free_port()
        conf = str(PROJECT / "config" / "gunicorn.conf.py")
        master = processes.start("web", str(VENV_BIN / "gunicorn"), "-c", conf, "-b", f"127.0.0.1:{port}")
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: requests.get(url + "/compute/", timeout=2).status_code == 200, what="gunicorn")
        yield url, master, tmp_path / "web.log"
    finally:
        processes.stop_all()


def workers_of(master):
    return wait_until(lambda: (pids := descendants(master.pid)) and len(pids) == 2 and sorted(pids), 30, "2 workers")


def slow_upload(url, seconds=2.0, pieces=10):
    """PUT an image's data in pieces, ``seconds`` in all, in a thread: (started, result)."""
    created = requests.post(
        url + "/image/v2/images",
        json={"name": "slow", "disk_format": "raw", "container_format": "bare"},
        headers=ADMIN,
        timeout=30,
    )
    image = created.json()["id"]
    started, result = threading.Event(), {"image_id": image}

    def data():
        for _ in range(pieces):
            yield b"x" * 1000
            started.set()
            time.sleep(seconds / pieces)

    def upload():
        try:
            headers = {**ADMIN, "Content-Type": "application/octet-stream"}
            put = requests.put(f"{url}/image/v2/images/{image}/file", data=data(), headers=headers, timeout=60)
            result["status"] = put.status_code
        except requests.RequestException as exc:
            result.setdefault("error", exc)

    thread = threading.Thread(target=upload)
    thread.start()
    assert started.wait(10)
    return thread, result


def test_workers_come_from_the_environment_and_the_access_log_names_the_request_id(web):
    url, master, log = web
    assert len(workers_of(master)) == 2
    answer = requests.get(url + "/compute/v2.1/os-aggregates", headers=ADMIN, timeout=10)
    request_id = answer.headers["X-OpenStack-Request-ID"]
    assert re.fullmatch(r"req-[0-9a-f-]{36}", request_id)
    line = wait_until(
        lambda: next((x for x in log.read_text().splitlines() if request_id in x), None), 10, "the access log line"
    )
    assert '"GET /compute/v2.1/os-aggregates HTTP/1.1" 200' in line


def test_sighup_restarts_the_workers_and_lets_the_request_in_flight_finish(web):
    url, master, _ = web
    before = workers_of(master)
    thread, result = slow_upload(url)
    os.kill(master.pid, signal.SIGHUP)
    thread.join(30)
    assert result.get("status") == 204, result
    after = wait_until(lambda: set(workers_of(master)).isdisjoint(before) and workers_of(master), 30, "new workers")
    assert len(after) == 2
    # A new worker is listed as soon as it is forked, before it has imported
    # Corral (config.wsgi imports every route first): on a loaded machine two
    # workers importing at once can take longer than a short timeout.
    assert requests.get(url + "/compute/", timeout=30).status_code == 200
    # The upload, left in flight on an old worker, arrived whole.
    image = requests.get(f"{url}/image/v2/images/{result['image_id']}", headers=ADMIN, timeout=30).json()
    assert (image["status"], image["size"]) == ("active", 10_000)


def test_sigterm_lets_the_request_in_flight_finish_then_stops_every_worker(web):
    url, master, _ = web
    workers = workers_of(master)
    thread, result = slow_upload(url)
    os.kill(master.pid, signal.SIGTERM)
    thread.join(30)
    assert result.get("status") == 204, result
    assert master.wait(30) == 0
    assert [pid for pid in workers if alive(pid)] == []
    with pytest.raises(requests.ConnectionError):
        requests.get(url + "/compute/", timeout=5)
