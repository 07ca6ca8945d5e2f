"""The agent's cache limit and pins through its HTTP API, the agent served
in this process (a thread) with a stand-in for Corral's image API: pinned
images are never evicted, the others go least recently used first."""

import hashlib
import threading
import time

import pytest
import requests

from aggregates.hostagent.cache import ImageCache
from aggregates.hostagent.server import HostAgent

SECRET = "eviction-secret"
SIZE = 1000
IDS = [f"00000000-0000-4000-8000-00000000000{n}" for n in range(1, 6)]


class FakeCorral:
    def data(self, image_id):
        return image_id.encode()[-1:] * SIZE

    def image(self, image_id):
        return {
            "status": "active",
            "os_hash_algo": "sha512",
            "os_hash_value": hashlib.sha512(self.data(image_id)).hexdigest(),
        }

    def image_chunks(self, image_id):
        yield self.data(image_id)


@pytest.fixture
def agent(tmp_path):
    cache = ImageCache(tmp_path / "cache", limit_bytes=3 * SIZE)
    host_agent = HostAgent(
        host="hx", cache=cache, corral=FakeCorral(), secret=SECRET, registration={}, heartbeat_interval=3600
    )
    server = host_agent.make_server(("127.0.0.1", 0))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    yield url, cache
    server.shutdown()
    server.server_close()


def call(method, url, **kwargs):
    return requests.request(method, url, headers={"Authorization": f"Bearer {SECRET}"}, timeout=10, **kwargs)


def cache(url, *items):
    response = call("POST", f"{url}/cache", json={"images": list(items)})
    assert response.status_code == 202, response.text
    request_id = response.json()["request"]["id"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        body = call("GET", f"{url}/cache/requests/{request_id}").json()["request"]
        if body["status"] == "done":
            return [r["status"] for r in body["results"]]
        time.sleep(0.02)
    raise AssertionError("cache request did not finish")


def held(url):
    return {i["id"]: i["pinned"] for i in call("GET", f"{url}/cache").json()["images"]}


def test_pinned_images_survive_eviction_and_the_rest_goes_lru(agent):
    url, _ = agent
    response = call("PUT", f"{url}/cache/pins", json={"images": [IDS[0]]})
    assert response.status_code == 200
    assert response.json() == {"pinned": [IDS[0]], "evicted": []}
    assert cache(url, {"id": IDS[0]}, {"id": IDS[1]}, {"id": IDS[2]}) == ["cached"] * 3
    time.sleep(0.01)
    assert cache(url, {"id": IDS[1]}) == ["existing"]  # used again: IDS[2] is now the least recently used
    assert cache(url, {"id": IDS[3]}) == ["cached"]
    assert held(url) == {IDS[0]: True, IDS[1]: False, IDS[3]: False}
    # A pinned image cached: the least recently used unpinned one makes room.
    assert cache(url, {"id": IDS[4], "pinned": True}) == ["cached"]
    assert held(url) == {IDS[0]: True, IDS[4]: True, IDS[3]: False}
    response = call("PUT", f"{url}/cache/pins", json={"images": [IDS[4], IDS[1]]})
    assert response.json() == {"pinned": sorted([IDS[1], IDS[4]]), "evicted": []}
    response = call("PUT", f"{url}/cache/pins", json={"images": []})
    assert response.json()["evicted"] == []  # at the limit: nothing to evict
    assert cache(url, {"id": IDS[2]}) == ["cached"]
    assert held(url) == {IDS[2]: False, IDS[3]: False, IDS[4]: False}  # unpinned, IDS[0] was the least recently used


def test_pins_survive_a_restart(agent, tmp_path):
    url, _ = agent
    call("PUT", f"{url}/cache/pins", json={"images": [IDS[0], IDS[1]]})
    assert ImageCache(tmp_path / "cache").pins() == {IDS[0], IDS[1]}


@pytest.mark.parametrize(
    "body",
    [
        {"images": ["not-a-uuid"]},
        {"images": [IDS[0], IDS[0]]},
        {"images": "x"},
        {"images": [1]},
        {"pins": []},
        [],
    ],
)
def test_bad_pin_bodies_400(agent, body):
    url, cache_ = agent
    response = call("PUT", f"{url}/cache/pins", json=body)
    assert response.status_code == 400
    assert cache_.pins() == set()


def test_bad_pinned_flag_400(agent):
    url, _ = agent
    response = call("POST", f"{url}/cache", json={"images": [{"id": IDS[0], "pinned": "yes"}]})
    assert response.status_code == 400
    assert call("PUT", f"{url}/cache/pins", json={"images": []}).status_code == 200
    assert requests.put(f"{url}/cache/pins", json={"images": []}, timeout=10).status_code == 401
