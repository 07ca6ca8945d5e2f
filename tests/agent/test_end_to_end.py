"""The issue's end-to-end: three real agents and one forced-down host in an
aggregate, one of the agents' hosts disabled; a pre-caching job on the
aggregate (POST /os-aggregates/{id}/images, 2.81) through the ``agent`` driver."""

import os
import time

import pytest

from aggregates.audit.models import Event
from aggregates.images.models import Image

from .conftest import sha512_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

V281 = {"OpenStack-API-Version": "compute 2.81"}


def test_precache_an_aggregate_through_three_agents(corral, start_agent, settings, image_file_gets):
    settings.CACHE_DRIVER = "agent"
    settings.IMAGE_CACHE_CONCURRENCY = 2
    settings.IMAGE_CACHE_HOST_TIMEOUT = 60
    data = os.urandom(2 * 1024 * 1024 + 5)
    image_id = corral.upload_image(data)
    agents = [start_agent(f"e2e-{n}") for n in (1, 2, 3)]
    down = {"registration": {"host": "e2e-down", "vcpus": 1, "memory_mb": 512, "local_gb": 1}}
    assert corral.compute("post", "/os-host-registrations", json=down).status_code == 201

    response = corral.compute("post", "/os-aggregates", json={"aggregate": {"name": "e2e"}})
    assert response.status_code == 200, response.text
    aggregate_id = response.json()["aggregate"]["id"]
    for host in ["e2e-1", "e2e-2", "e2e-3", "e2e-down"]:
        added = corral.compute("post", f"/os-aggregates/{aggregate_id}/action", json={"add_host": {"host": host}})
        assert added.status_code == 200, added.text
    services = {s["host"]: s["id"] for s in corral.compute("get", "/os-services").json()["services"]}
    disabled = corral.compute("put", f"/os-services/{services['e2e-2']}", json={"status": "disabled"})
    assert disabled.status_code == 200, disabled.text
    forced = corral.compute("put", f"/os-services/{services['e2e-down']}", json={"forced_down": True})
    assert forced.status_code == 200, forced.text

    response = corral.compute(
        "post", f"/os-aggregates/{aggregate_id}/images", json={"cache": [{"id": image_id}]}, headers=V281
    )
    assert response.status_code == 202, response.text
    job_url = response.headers["Location"]

    deadline = time.monotonic() + 90
    while True:
        job = corral.session.get(job_url, headers=V281, timeout=30).json()["job"]
        if job["finished_at"] or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert job["status"] == "completed", job
    hosts = {h["host"]: (h["status"], [i["status"] for i in h["images"]]) for h in job["hosts"]}
    assert hosts == {
        "e2e-1": ("completed", ["cached"]),
        "e2e-2": ("completed", ["cached"]),  # disabled, but up: Nova caches on it too
        "e2e-3": ("completed", ["cached"]),
        "e2e-down": ("skipped", ["skipped"]),
    }
    expected = Image.objects.get(id=image_id).os_hash_value
    for agent in agents:
        assert sha512_of(agent.cache_dir / image_id) == expected
        assert [i["id"] for i in agent.get("/cache").json()["images"]] == [image_id]
    assert len(image_file_gets) == 3

    events = list(Event.objects.filter(event_type__startswith="aggregate.cache_images.").order_by("id"))
    assert [e.event_type.rsplit(".", 1)[1] for e in events] == ["start"] + ["progress"] * 4 + ["end"]
    progress = [e.payload for e in events[1:5]]
    assert sorted(p["index"] for p in progress) == [1, 2, 3, 4]
    assert {p["total"] for p in progress} == {4}
    assert progress[0]["host"] == "e2e-down"  # down hosts are reported first, without a call
    assert progress[0]["images_failed"] == [image_id]
    assert sorted(p["host"] for p in progress[1:]) == ["e2e-1", "e2e-2", "e2e-3"]
    assert all(p["images_cached"] == [image_id] for p in progress[1:])
