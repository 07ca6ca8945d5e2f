"""A candidates response is answered before its search's objects are freed:
cyclic collection, paused for the search, resumes once the response has
been sent (the server closes it; the test client does too) or dropped
unclosed (the in-process client), and is left as it was found."""

import gc
import json
import weakref

import pytest
import requests

from aggregates.placement_client import inprocess
from placement import candidates

from .conftest import PlacementClient

QUERY = "/allocation_candidates?resources=VCPU:1"


@pytest.fixture
def cloud(noauth):
    placement = PlacementClient()
    for index in range(3):
        placement.provider(f"cn{index}", inventory={"VCPU": 8})
    return placement


def unsent(path):
    """Placement's Django response, as a WSGI server gets it before sending it."""
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.39"}
    return inprocess.call_placement(requests.Request("GET", inprocess.INPROCESS_URL + path, headers=headers).prepare())


@pytest.mark.django_db
def test_collection_stays_paused_until_the_response_is_closed(cloud):
    assert gc.isenabled()
    response = unsent(QUERY)
    assert response.status_code == 200
    assert not gc.isenabled()  # the search's objects are held, untracked passes saved
    body = json.loads(b"".join(response))
    assert len(body["allocation_requests"]) == 3
    assert len(body["provider_summaries"]) == 3
    response.close()
    assert gc.isenabled()


@pytest.mark.django_db
def test_collection_resumes_when_an_unclosed_response_is_dropped(cloud):
    response = unsent(QUERY)
    assert not gc.isenabled()
    del response
    assert gc.isenabled()


@pytest.mark.django_db
def test_collection_paused_by_the_caller_stays_paused(cloud):
    """The scheduler decides with collection paused; placement in process
    must not turn it back on under it."""
    gc.disable()
    try:
        response = unsent(QUERY)
        response.close()
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.django_db
def test_an_answer_through_the_test_client_leaves_collection_on(cloud):
    response = cloud.get(QUERY, version="1.39")
    assert response.status_code == 200
    assert len(response.json()["allocation_requests"]) == 3
    assert gc.isenabled()


@pytest.mark.django_db
def test_the_search_is_freed_after_the_response_is_sent(cloud, monkeypatch):
    """The search (every provider's inventories read, for an unlimited
    query) is freed with the candidates after sending, not before."""
    searches = []
    search_init = candidates.Search.__init__

    def recording(self, *args, **kwargs):
        search_init(self, *args, **kwargs)
        searches.append(weakref.ref(self))

    monkeypatch.setattr(candidates.Search, "__init__", recording)
    response = unsent(QUERY)
    assert len(searches) == 1
    assert searches[0]() is not None  # held while the body is being sent
    assert len(json.loads(b"".join(response))["allocation_requests"]) == 3
    response.close()
    assert searches[0]() is None
