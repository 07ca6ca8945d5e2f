"""The pre-cache policy end to end with real host agents: a pinned image is
cached on the aggregate's hosts, a host that joins gets it, a cached file
deleted on a host is back after the next re-check, the pinned image survives
the agent's eviction (its cache limit), and a newer image of the same name
rolls out and replaces it."""

import os
import time

import pytest

from .conftest import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

V281 = {"OpenStack-API-Version": "compute 2.81"}
KIB = 1024


def states(corral, aggregate_id):
    response = corral.compute("get", f"/os-aggregates/{aggregate_id}/pinned-images")
    assert response.status_code == 200, response.text
    return {p["image_id"]: {h["host"]: h["state"] for h in p["hosts"]} for p in response.json()["pinned_images"]}


def wait_cached(corral, aggregate_id, image_id, hosts):
    return wait_for(
        lambda: states(corral, aggregate_id).get(image_id) == {h: "cached" for h in hosts}, timeout=30, interval=0.2
    )


def recheck(corral, aggregate_id):
    response = corral.compute("post", f"/os-aggregates/{aggregate_id}/pinned-images/recheck", json={"recheck": {}})
    assert response.status_code == 202, response.text
    return response.json()["recheck"]


def test_pinned_images_with_real_agents(corral, start_agent, settings):
    settings.CACHE_DRIVER = "agent"
    settings.IMAGE_CACHE_HOST_TIMEOUT = 60
    pinned = corral.upload_image(os.urandom(64 * KIB), name="golden")
    first = start_agent("pin-1", "--cache-limit", "150K")
    second = start_agent("pin-2")
    response = corral.compute("post", "/os-aggregates", json={"aggregate": {"name": "pins"}})
    aggregate_id = response.json()["aggregate"]["id"]
    corral.compute("post", f"/os-aggregates/{aggregate_id}/action", json={"add_host": {"host": "pin-1"}})

    response = corral.compute(
        "post", f"/os-aggregates/{aggregate_id}/pinned-images", json={"pinned_image": {"image_id": pinned}}
    )
    assert response.status_code == 201, response.text
    wait_cached(corral, aggregate_id, pinned, ["pin-1"])
    assert first.get("/cache").json()["images"][0]["pinned"] is True

    # A host that joins gets the pinned image, nobody asking.
    joined = corral.compute("post", f"/os-aggregates/{aggregate_id}/action", json={"add_host": {"host": "pin-2"}})
    assert joined.status_code == 200, joined.text
    wait_cached(corral, aggregate_id, pinned, ["pin-1", "pin-2"])
    assert (second.cache_dir / pinned).is_file()

    # Deleted on a host: back after the next re-check.
    (second.cache_dir / pinned).unlink()
    done = recheck(corral, aggregate_id)
    assert done["hosts_asked"] == ["pin-1", "pin-2"] and done["job_id"]
    wait_for(lambda: (second.cache_dir / pinned).is_file(), timeout=30)
    wait_cached(corral, aggregate_id, pinned, ["pin-1", "pin-2"])

    # Past pin-1's cache limit (150 KiB) the least recently used image goes,
    # never the pinned one (the least recently used of all).
    others = [corral.upload_image(os.urandom(64 * KIB), name=f"other-{n}") for n in (1, 2)]
    for image_id in others:
        response = corral.compute(
            "post", f"/os-aggregates/{aggregate_id}/images", json={"cache": [{"id": image_id}]}, headers=V281
        )
        assert response.status_code == 202, response.text
        wait_for(lambda image_id=image_id: (first.cache_dir / image_id).is_file(), timeout=30)
    held = {i["id"]: i["pinned"] for i in first.get("/cache").json()["images"]}
    assert held == {pinned: True, others[1]: False}

    # A newer image of the same name rolls out; the old is unpinned once every host has it.
    time.sleep(0.01)
    newer = corral.upload_image(os.urandom(32 * KIB), name="golden")
    done = recheck(corral, aggregate_id)
    assert done["pinned"] == [newer]
    wait_cached(corral, aggregate_id, newer, ["pin-1", "pin-2"])
    done = recheck(corral, aggregate_id)
    assert done["unpinned"] == [pinned]
    assert list(states(corral, aggregate_id)) == [newer]
    for agent in (first, second):
        pins = {i["id"]: i["pinned"] for i in agent.get("/cache").json()["images"]}
        assert pins[newer] is True and pins.get(pinned) in (False, None)
