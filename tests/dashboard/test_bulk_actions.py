"""Bulk actions on the console's lists: disable/enable the checked hosts,
delete the checked aggregates (after a confirm step), all or none, each
ending in a redirect back to the filtered list."""

import pytest
from django.contrib.messages import get_messages

from aggregates.audit.models import Event
from aggregates.errors import Invalid
from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts import services as host_services
from aggregates.hosts.models import Service


def messages_of(response):
    return [str(m) for m in get_messages(response.wsgi_request)]


def state(host):
    service = Service.objects.get(host=host, binary=Service.COMPUTE)
    return service.disabled, service.disabled_reason


# --- hosts ----------------------------------------------------------------------


def test_hosts_list_has_a_checkbox_per_row_and_the_bulk_form(admin_client, hosts):
    response = admin_client.get("/hosts/?host=node")
    content = response.content.decode()
    for host in ("node1", "node2", "node3"):
        assert f'name="host" value="{host}" form="bulk-status"' in content
    assert 'action="/hosts/status/"' in content and 'name="back" value="host=node"' in content
    assert "Disable selected" in content and "Enable selected" in content


def test_hosts_list_has_no_bulk_form_for_readers(reader_client, hosts):
    content = reader_client.get("/hosts/").content.decode()
    assert "bulk-status" not in content and 'name="host" value="node1"' not in content


def test_disable_selected_with_one_reason_and_one_event_per_host(admin_client, hosts):
    before = Event.objects.latest("id").id
    response = admin_client.post(
        "/hosts/status/",
        {
            "host": ["node1", "node2"],
            "action": "disable",
            "disabled_reason": "rack 4 power",
            "back": "host=node&page=1",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/hosts/?host=node&page=1"
    assert state("node1") == (True, "rack 4 power") and state("node2") == (True, "rack 4 power")
    assert state("node3") == (False, None)
    events = Event.objects.filter(id__gt=before)
    assert sorted(e.payload["host"] for e in events.filter(event_type="service.update")) == ["node1", "node2"]
    assert all(e.payload["disabled_reason"] == "rack 4 power" for e in events.filter(event_type="service.update"))
    assert messages_of(response) == ["Disabled 2 host(s): node1, node2."]


def test_enable_selected_clears_the_reason(admin_client, system, hosts):
    for host in ("node1", "node2"):
        service = Service.objects.get(host=host)
        host_services.update_service(system, service.uuid, status="disabled", disabled_reason="old")
    response = admin_client.post(
        "/hosts/status/", {"host": ["node1", "node2"], "action": "enable", "disabled_reason": "ignored"}
    )
    assert response.status_code == 302 and response["Location"] == "/hosts/"
    assert state("node1") == (False, None) and state("node2") == (False, None)
    assert messages_of(response) == ["Enabled 2 host(s): node1, node2."]


def test_bulk_status_goes_through_the_compute_api_update_for_each_host(admin_client, hosts, monkeypatch):
    """The same domain function as PUT /os-services/{id}; when it refuses one
    host, nothing changes and the message names the host and the reason."""
    real = host_services.update_service
    calls = []

    def update_service(caller, service_uuid, **kwargs):
        service = Service.objects.get(uuid=service_uuid)
        calls.append(service.host)
        if service.host == "node2":
            raise Invalid("Host is draining.")
        return real(caller, service_uuid, **kwargs)

    monkeypatch.setattr(host_services, "update_service", update_service)
    before = Event.objects.latest("id").id
    response = admin_client.post(
        "/hosts/status/", {"host": ["node1", "node2", "node3"], "action": "disable", "disabled_reason": "x"}
    )
    assert response.status_code == 302
    assert calls == ["node1", "node2"]
    assert state("node1") == (False, None) and state("node2") == (False, None)
    assert not Event.objects.filter(id__gt=before, event_type="service.update").exists()
    assert Event.objects.filter(id__gt=before, event_type="compute.exception").count() == 1
    assert messages_of(response) == ["Host node2: Host is draining. Nothing was changed."]


def test_bulk_status_is_all_or_nothing_when_a_host_is_gone(admin_client, hosts):
    response = admin_client.post(
        "/hosts/status/", {"host": ["node1", "ghost"], "action": "disable", "disabled_reason": "x", "back": "state=up"}
    )
    assert response.status_code == 302 and response["Location"] == "/hosts/?state=up"
    assert state("node1") == (False, None)
    (message,) = messages_of(response)
    assert message.startswith("Host ghost:") and "Nothing was changed." in message


def test_bulk_disable_checks_the_reason_by_the_api_rule(admin_client, hosts):
    response = admin_client.post(
        "/hosts/status/", {"host": ["node1"], "action": "disable", "disabled_reason": "r" * 256}
    )
    assert response.status_code == 302 and response["Location"] == "/hosts/"
    assert state("node1") == (False, None)
    (message,) = messages_of(response)
    assert message.startswith("Nothing was changed:") and "is too long" in message


def test_bulk_status_without_a_selection(admin_client, hosts):
    response = admin_client.post("/hosts/status/", {"action": "disable", "back": "host=node"})
    assert response["Location"] == "/hosts/?host=node"
    assert messages_of(response) == ["Select the hosts to enable or disable first."]


def test_bulk_status_is_for_admins_only(reader_client, hosts):
    response = reader_client.post("/hosts/status/", {"host": ["node1"], "action": "disable"})
    assert response.status_code == 403
    assert state("node1") == (False, None)


def test_back_cannot_point_elsewhere(admin_client, hosts):
    response = admin_client.post(
        "/hosts/status/", {"host": ["node1"], "action": "enable", "back": "//evil.example/?x=1"}
    )
    assert response["Location"].startswith("/hosts/?")


# --- aggregates ---------------------------------------------------------------------


@pytest.fixture
def three(system, hosts):
    """empty-a and empty-b have no hosts; busy holds node1."""
    empty_a = services.create_aggregate(system, "empty-a")
    empty_b = services.create_aggregate(system, "empty-b", "az1")
    busy = services.create_aggregate(system, "busy")
    services.add_host(system, busy.id, "node1")
    return empty_a, empty_b, busy


def test_aggregates_list_has_checkboxes_and_a_delete_selected_form(admin_client, three):
    content = admin_client.get("/aggregates/?name=e").content.decode()
    for aggregate in three[:2]:
        assert f'name="id" value="{aggregate.id}" form="bulk-delete"' in content
    assert 'action="/aggregates/delete/"' in content and 'name="back" value="name=e"' in content


def test_delete_selected_asks_first_and_changes_nothing(admin_client, three):
    empty_a, empty_b, _ = three
    response = admin_client.get(f"/aggregates/delete/?id={empty_a.id}&id={empty_b.id}&back=name%3Dempty")
    assert response.status_code == 200
    assert [a.name for a in response.context["aggregates"]] == ["empty-a", "empty-b"]
    content = response.content.decode()
    assert 'method="post" action="/aggregates/delete/"' in content
    assert 'name="back" value="name=empty"' in content and 'href="/aggregates/?name=empty"' in content
    assert Aggregate.objects.count() == 3


def test_the_confirm_step_warns_about_aggregates_with_hosts(admin_client, three):
    empty_a, _, busy = three
    response = admin_client.get(f"/aggregates/delete/?id={empty_a.id}&id={busy.id}")
    assert [a.name for a in response.context["not_empty"]] == ["busy"]
    assert "busy still has hosts" in response.content.decode()


def test_delete_selected_deletes_them_all_and_goes_back_to_the_filtered_list(admin_client, three):
    empty_a, empty_b, _ = three
    before = Event.objects.latest("id").id
    response = admin_client.post(
        "/aggregates/delete/", {"id": [empty_a.id, empty_b.id], "back": "name=empty&sort=name"}
    )
    assert response.status_code == 302 and response["Location"] == "/aggregates/?name=empty&sort=name"
    assert list(Aggregate.objects.values_list("name", flat=True)) == ["busy"]
    ends = Event.objects.filter(id__gt=before, event_type="aggregate.delete.end")
    assert sorted(e.payload["name"] for e in ends) == ["empty-a", "empty-b"]
    assert messages_of(response) == ["Deleted 2 aggregate(s): empty-a, empty-b."]


def test_delete_selected_is_all_or_nothing_and_names_the_aggregates_with_hosts(admin_client, three):
    empty_a, empty_b, busy = three
    before = Event.objects.latest("id").id
    response = admin_client.post("/aggregates/delete/", {"id": [empty_a.id, busy.id, empty_b.id], "back": "name=e"})
    assert response.status_code == 302 and response["Location"] == "/aggregates/?name=e"
    assert Aggregate.objects.count() == 3
    assert not Event.objects.filter(id__gt=before, event_type="aggregate.delete.end").exists()
    (message,) = messages_of(response)
    assert "busy (1 host(s))" in message and "still has hosts" in message and "Nothing was deleted." in message
    assert "empty-a" not in message


def test_delete_selected_of_a_missing_aggregate_deletes_nothing(admin_client, three):
    empty_a, _, _ = three
    response = admin_client.post("/aggregates/delete/", {"id": [empty_a.id, 99999]})
    assert response.status_code == 302
    assert Aggregate.objects.filter(pk=empty_a.id).exists()
    assert "99999" in messages_of(response)[0]


def test_delete_selected_without_a_selection(admin_client, three):
    response = admin_client.post("/aggregates/delete/", {"back": "zone=az1"})
    assert response["Location"] == "/aggregates/?zone=az1"
    assert messages_of(response) == ["Select the aggregates to delete first."]
    response = admin_client.get("/aggregates/delete/")
    assert response.status_code == 302 and response["Location"] == "/aggregates/"


def test_delete_selected_is_for_admins_only(reader_client, three):
    empty_a, _, _ = three
    assert reader_client.post("/aggregates/delete/", {"id": [empty_a.id]}).status_code == 403
    assert Aggregate.objects.count() == 3


def test_the_confirm_step_is_for_admins_only(reader_client, three):
    empty_a, _, _ = three
    assert reader_client.get(f"/aggregates/delete/?id={empty_a.id}").status_code == 403
