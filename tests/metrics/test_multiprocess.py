"""Under gunicorn with two workers, one scrape sums what both counted, and
shows what a Celery worker's processes counted (prometheus-client's
multiprocess mode, PROMETHEUS_MULTIPROC_DIR)."""

import json
import os
import re

import pytest
import requests
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from tests.plugins.upstream_placement import free_port
from tests.process_stack import VENV_BIN, Processes, redis_answers, wait_until

pytestmark = pytest.mark.processes

REDIS_URL = "redis://127.0.0.1:6379/12"

COUNT = "corral_http_request_duration_seconds_count"
BUCKET = "corral_http_request_duration_seconds_bucket"
LABELS = {"route": "/compute/", "method": "GET", "status": "200"}


def scraped_count(url):
    text = requests.get(url + "/metrics", timeout=10).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == COUNT and sample.labels == LABELS:
                return sample.value
    return 0


def _is_bucket(key):
    _, name, labels, _ = json.loads(key)
    labels.pop("le", None)
    return name == BUCKET and labels == LABELS


def counted_by_each_process(directory):
    """pid -> the requests to /compute/ that process counted in its own file."""
    counts = {}
    for name in os.listdir(directory):
        match = re.match(r"histogram_(\d+)\.db$", name)
        if not match:
            continue
        values = MmapedDict(str(directory / name), read_mode=True)
        try:
            # A process's file holds its buckets, each counting its own
            # observations only (not cumulative): the count is their sum.
            counts[match.group(1)] = sum(value for key, value, _ in values.read_all_values() if _is_bucket(key))
        finally:
            values.close()
    return {pid: n for pid, n in counts.items() if n}


def test_a_scrape_sums_the_counters_of_every_gunicorn_worker(tmp_path):
    multiproc = tmp_path / "prometheus"
    multiproc.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_", "DATABASE_"))},
        "CORRAL_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path}/corral.sqlite3",
        "PLACEMENT_URL": "",
        "METRICS_ENABLED": "true",
        "PROMETHEUS_MULTIPROC_DIR": str(multiproc),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    processes = Processes(tmp_path, env)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    try:
        processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
        processes.start("server", str(VENV_BIN / "gunicorn"), "-b", f"127.0.0.1:{port}", "-w", "2", "config.wsgi")
        wait_until(lambda: requests.get(url + "/healthcheck", timeout=2).status_code == 200, what="gunicorn")

        sent = 0
        while (len(counted_by_each_process(multiproc)) < 2 or sent < 20) and sent < 1000:
            # A new connection each time: either worker may accept it.
            assert requests.get(url + "/compute/", timeout=5, headers={"Connection": "close"}).status_code == 200
            sent += 1
        by_worker = counted_by_each_process(multiproc)
        assert len(by_worker) == 2, "one worker served every request"
        assert sum(by_worker.values()) == sent

        assert scraped_count(url) == sent
    finally:
        processes.stop_all()


@pytest.mark.skipif(not redis_answers(), reason="Redis is not reachable on 127.0.0.1:6379")
def test_a_celery_workers_tasks_reach_the_web_servers_scrape(tmp_path):
    multiproc = tmp_path / "prometheus"
    multiproc.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_", "DATABASE_"))},
        "CORRAL_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path}/corral.sqlite3",
        "CELERY_BROKER_URL": REDIS_URL,
        "PLACEMENT_URL": "",
        "METRICS_ENABLED": "true",
        "PROMETHEUS_MULTIPROC_DIR": str(multiproc),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    processes = Processes(tmp_path, env)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    task = "corral.mirroring.drain_mirror_requests"
    labels = {"task": task, "state": "SUCCESS"}

    def tasks_counted():
        text = requests.get(url + "/metrics", timeout=10).text
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "corral_celery_task_duration_seconds_count" and sample.labels == labels:
                    return sample.value
        return 0

    try:
        processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
        processes.run(str(VENV_BIN / "celery"), "-A", "config", "purge", "-f")
        processes.start("server", str(VENV_BIN / "gunicorn"), "-b", f"127.0.0.1:{port}", "-w", "1", "config.wsgi")
        processes.start("worker", str(VENV_BIN / "celery"), "-A", "config", "worker", "-c", "2", "-l", "info")
        wait_until(lambda: requests.get(url + "/healthcheck", timeout=2).status_code == 200, what="gunicorn")
        before = tasks_counted()
        for _ in range(3):
            processes.run(str(VENV_BIN / "celery"), "-A", "config", "call", task)
        wait_until(lambda: tasks_counted() >= before + 3, timeout=60, what="the worker's tasks in the scrape")
    finally:
        processes.stop_all()
