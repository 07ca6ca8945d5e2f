"""The host agent as a real process against a live Corral: registration and
heartbeat, caching through the ``agent`` driver, its checks and its failures."""

import os
import signal
import socket
import threading
import time

import pytest
import requests

from aggregates.hosts.models import ComputeNode, Service
from aggregates.images.models import Image
from aggregates.precache.agent_driver import AgentDriver
from aggregates.precache.drivers import DriverUnavailable, HostTarget, ImageToCache

from .conftest import SECRET, sha512_of, start_agent_process, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


def run_cache(host, image_ids, timeout=60, driver=None):
    done = []
    results = (driver or AgentDriver()).cache(
        HostTarget(host=host), [ImageToCache(id=image_id) for image_id in image_ids], timeout, done.append
    )
    assert [r.image_id for r in done] == [r.image_id for r in results]
    return results


def cache_dir_names(agent):
    return sorted(p.name for p in agent.cache_dir.iterdir())


def test_agent_registers_its_host_at_start(corral, start_agent):
    agent = start_agent("agent-host-1", "--vcpus", "7", "--disk-gb", "123")

    hypervisors = corral.compute("get", "/os-hypervisors/detail", headers={"OpenStack-API-Version": "compute 2.87"})
    (node,) = [h for h in hypervisors.json()["hypervisors"] if h["hypervisor_hostname"] == "agent-host-1"]
    assert node["vcpus"] == 7
    assert node["local_gb"] == 123
    assert node["memory_mb"] > 0  # detected
    assert node["state"] == "up"
    services = corral.compute("get", "/os-services?host=agent-host-1").json()["services"]
    assert [(s["binary"], s["state"], s["status"]) for s in services] == [("nova-compute", "up", "enabled")]
    assert ComputeNode.objects.get(host="agent-host-1").agent_url == agent.url
    assert agent.url.startswith("http://127.0.0.1:")


def test_agent_heartbeats_by_registering_again(corral, start_agent):
    start_agent("agent-hb", heartbeat=0.3)

    def seen():
        (service,) = corral.compute("get", "/os-services?host=agent-hb").json()["services"]
        return service["updated_at"]

    seen_at = {seen()}
    # Each re-registration is a heartbeat: the service's updated_at moves on.
    wait_for(lambda: seen_at.add(seen()) or len(seen_at) >= 3, timeout=15, interval=0.2)
    # Still one service and one node: re-registration never duplicates.
    hypervisors = corral.compute("get", "/os-hypervisors?hypervisor_hostname_pattern=agent-hb").json()
    assert len(hypervisors["hypervisors"]) == 1
    assert len(corral.compute("get", "/os-services?host=agent-hb").json()["services"]) == 1


def test_agent_refuses_to_start_with_a_bad_token(corral, tmp_path):
    with pytest.raises(AssertionError, match="Registration refused: HTTP 401"):
        start_agent_process("agent-bad", corral.url, "not-a-token", tmp_path / "c")
    assert not Service.objects.filter(host="agent-bad").exists()


def test_registration_refuses_a_bad_agent_url(corral):
    body = {"registration": {"host": "h1", "vcpus": 1, "memory_mb": 1, "local_gb": 1, "agent_url": "ftp://x y"}}
    response = corral.compute("post", "/os-host-registrations", json=body)
    assert response.status_code == 400
    assert "agent_url" in response.json()["badRequest"]["message"]
    assert not Service.objects.filter(host="h1").exists()


def test_agent_calls_need_the_secret(corral, start_agent):
    agent = start_agent("agent-auth")
    assert agent.get("/cache", secret=None).status_code == 401
    assert agent.get("/cache", secret="wrong").status_code == 401
    response = requests.post(agent.url + "/cache", json={"images": []}, headers={"Authorization": "Bearer wrong"})
    assert response.status_code == 401
    assert agent.get("/cache").json() == {"host": "agent-auth", "images": []}
    assert agent.get("/healthz", secret=None).json()["status"] == "ok"


def test_agent_refuses_a_bad_cache_request(corral, start_agent):
    agent = start_agent("agent-400")
    headers = {"Authorization": f"Bearer {SECRET}"}
    for body in ({"images": []}, {"images": [{"id": "nope"}]}, {"foo": 1}, {"images": [{"id": "a", "x": 1}]}):
        response = requests.post(agent.url + "/cache", json=body, headers=headers, timeout=10)
        assert response.status_code == 400, body
        assert response.json()["error"]["message"]
    image_id = "6b4b7e1e-7c1f-4a6e-9a35-0c0d4b0f6f01"
    response = requests.post(
        agent.url + "/cache", json={"images": [{"id": image_id}, {"id": image_id}]}, headers=headers, timeout=10
    )
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "Duplicate images in request."


def test_cache_an_image_then_existing_without_download(corral, start_agent, image_file_gets):
    data = os.urandom(3 * 1024 * 1024 + 17)
    image_id = corral.upload_image(data)
    agent = start_agent("agent-cache")

    (result,) = run_cache("agent-cache", [image_id])
    assert (result.status, result.error, result.bytes) == ("cached", "", len(data))
    path = agent.cache_dir / image_id
    assert path.read_bytes() == data
    assert sha512_of(path) == Image.objects.get(id=image_id).os_hash_value
    assert image_file_gets == [image_id]
    listed = agent.get("/cache").json()["images"]
    assert [(i["id"], i["size"], i["os_hash_value"]) for i in listed] == [
        (image_id, len(data), Image.objects.get(id=image_id).os_hash_value)
    ]
    assert AgentDriver().cached_images(HostTarget(host="agent-cache")) == [image_id]

    (again,) = run_cache("agent-cache", [image_id])
    assert again.status == "existing"
    assert image_file_gets == [image_id]  # nothing downloaded the second time


def test_a_corrupted_download_is_an_error_and_leaves_no_file(corral, start_agent, image_file_gets):
    image_id = corral.upload_image(os.urandom(512 * 1024))
    Image.objects.filter(id=image_id).update(os_hash_value="0" * 128)  # the data no longer matches
    agent = start_agent("agent-corrupt")

    (result,) = run_cache("agent-corrupt", [image_id])
    assert result.status == "error"
    assert "Checksum mismatch" in result.error
    assert image_file_gets == [image_id]  # it was downloaded, then refused
    assert cache_dir_names(agent) == []  # no file, no temporary file
    assert agent.get("/cache").json()["images"] == []


def test_results_per_image_and_an_unknown_image(corral, start_agent):
    good = corral.upload_image(b"x" * 1000)
    missing = "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d"
    start_agent("agent-mixed")
    results = run_cache("agent-mixed", [missing, good])
    assert [(r.image_id, r.status) for r in results] == [(missing, "error"), (good, "cached")]
    assert "404" in results[0].error


def test_an_agent_killed_mid_job_is_an_error_and_the_others_complete(corral, start_agent, monkeypatch):
    from aggregates.images import services as image_services
    from aggregates.images import storage

    data = os.urandom(4 * 1024 * 1024)
    image_id = corral.upload_image(data)
    # Serve the data slowly, so the job is surely under way when one agent dies.
    original = storage.read_range

    def slow_range(handle, start, length):
        for chunk in original(handle, start, length):
            time.sleep(0.02)
            yield chunk

    monkeypatch.setattr(storage, "read_range", slow_range)
    assert image_services  # the view streams through storage.read_range
    doomed = start_agent("agent-doomed")
    survivor = start_agent("agent-survivor")
    results = {}

    def run(host):
        results[host] = run_cache(host, [image_id], timeout=120)

    threads = [threading.Thread(target=run, args=(host,)) for host in ("agent-doomed", "agent-survivor")]
    for thread in threads:
        thread.start()
    wait_for(lambda: any(p.name.startswith(".part-") for p in doomed.cache_dir.iterdir()))
    doomed.kill()
    started = time.monotonic()
    for thread in threads:
        thread.join(120)
    assert time.monotonic() - started < 60
    (lost,) = results["agent-doomed"]
    assert lost.status == "error"
    assert "unreachable" in lost.error
    (kept,) = results["agent-survivor"]
    assert kept.status == "cached"
    assert sha512_of(survivor.cache_dir / image_id) == Image.objects.get(id=image_id).os_hash_value
    assert not (doomed.cache_dir / image_id).exists()

    # Restarted, the agent clears the partial download it left behind.
    restarted = start_agent("agent-doomed")
    assert cache_dir_names(restarted) == []


def test_a_silent_agent_is_an_error_within_the_deadline(corral):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections (the kernel does), never answers
    try:
        port = silent.getsockname()[1]
        body = {
            "registration": {
                "host": "agent-silent",
                "vcpus": 1,
                "memory_mb": 1,
                "local_gb": 1,
                "agent_url": f"http://127.0.0.1:{port}",
            }
        }
        assert corral.compute("post", "/os-host-registrations", json=body).status_code == 201
        image_id = "2c8a5a40-4a4b-4c55-8f3e-6b1f0d5c9e11"
        started = time.monotonic()
        (result,) = run_cache("agent-silent", [image_id], timeout=30, driver=AgentDriver(read_timeout=1))
        assert result.status == "error"
        assert "did not answer in time" in result.error
        assert time.monotonic() - started < 10

        started = time.monotonic()
        (result,) = run_cache("agent-silent", [image_id], timeout=1.5)  # default timeouts, shorter deadline
        assert result.status == "error"
        assert time.monotonic() - started < 5
    finally:
        silent.close()


def test_a_host_without_agent_or_secret(corral, settings):
    body = {"registration": {"host": "no-agent", "vcpus": 1, "memory_mb": 1, "local_gb": 1}}
    assert corral.compute("post", "/os-host-registrations", json=body).status_code == 201
    (result,) = run_cache("no-agent", ["2c8a5a40-4a4b-4c55-8f3e-6b1f0d5c9e11"])
    assert result.status == "error"
    assert "registered no agent address" in result.error
    with pytest.raises(DriverUnavailable):
        AgentDriver().cached_images(HostTarget(host="no-agent"))
    settings.AGENT_SHARED_SECRET = ""
    with pytest.raises(DriverUnavailable):
        AgentDriver().cached_images(HostTarget(host="no-agent"))


def test_agent_stops_cleanly_on_sigterm(corral, start_agent):
    agent = start_agent("agent-stop")
    started = time.monotonic()
    agent.process.send_signal(signal.SIGTERM)
    assert agent.process.wait(10) == 0
    assert time.monotonic() - started < 5
    with pytest.raises(requests.ConnectionError):
        agent.get("/healthz")
