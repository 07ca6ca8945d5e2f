"""The console's Scheduling page (a GET form answered by the scheduler's
explain) and a stored decision's page: one table row per compute node with
the filter that rejected it, service errors beside their field, readers
may look."""

import re
from urllib.parse import urlencode

import pytest

from aggregates.flavors import services as flavors
from aggregates.host_aggregates import services as aggregates
from aggregates.hosts import services as hosts
from aggregates.hosts.models import Service
from aggregates.images.models import Image
from aggregates.scheduling.models import SchedulingDecision

FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter", "AggregateMultiTenancyIsolation"]


@pytest.fixture
def ssd_cloud(cloud, settings, system):
    """The one cloud with three hosts, two of them in an ssd aggregate; an
    ssd flavor and a plain one."""
    settings.ENABLED_FILTERS = FILTERS
    cloud.hosts("node1", "node2", "node3")
    fast = cloud.aggregate("fast-io", ["node1", "node2"], zone="az1", ssd="true")
    ssd = cloud.flavor(
        "ssd.large", ram=2048, vcpus=2, disk=10, extra_specs={"aggregate_instance_extra_specs:ssd": "true"}
    )
    small = cloud.flavor("m1.small", ram=512, vcpus=1, disk=1)
    return {"ssd": ssd, "small": small, "fast": fast, "system": system}


def explain(client, **params):
    return client.get("/scheduling/?" + urlencode(params))


def host_rows(content):
    """host -> the <tr> of the decision table (its class and cells)."""
    table = re.search(r'<table id="decision-hosts".*?</table>', content, re.S).group(0)
    rows = {}
    for row in re.findall(r"<tr class=\"result-[a-z]+\".*?</tr>", table, re.S):
        host = re.search(r"<strong>([^<]+)</strong>", row).group(1)
        rows[host] = row
    return rows


def test_form_renders_with_flavors_zones_and_projects(admin_client, ssd_cloud):
    response = admin_client.get("/scheduling/")
    assert response.status_code == 200
    content = response.content.decode()
    assert 'method="get"' in content and 'id="explain-form"' in content
    assert "ssd.large" in content and "m1.small" in content
    assert '<option value="az1">az1</option>' in content
    assert 'list="project-choices"' in content
    assert response.context["decision"] is None
    assert 'class="active">Scheduling</a>' in content


def test_explain_shows_one_row_per_host_with_the_rejecting_filter(admin_client, ssd_cloud):
    response = explain(admin_client, flavor=ssd_cloud["ssd"].flavorid, num_instances=1)
    assert response.status_code == 200
    decision = response.context["decision"]
    assert decision.outcome == SchedulingDecision.EXPLAINED
    content = response.content.decode()
    rows = host_rows(content)
    assert set(rows) == {"node1", "node2", "node3"}
    assert 'class="result-rejected"' in rows["node3"]
    assert "AggregateInstanceExtraSpecsFilter" in rows["node3"]
    assert 'class="rejecting"' in rows["node3"] and "filter-name rejecting" in rows["node3"]
    assert sum('class="result-chosen"' in row for row in rows.values()) == 1
    # The summary: candidates, chosen hosts, the placement query in monospace, a link to the stored decision.
    assert 'id="decision-candidates">3<' in content
    assert "GET /allocation_candidates?" in content and "DISK_GB:10" in content
    assert f"/scheduling/decisions/{decision.uuid}/" in content
    assert decision.explanation["chosen"][0] in ("node1", "node2")
    # Sorting and filtering are the page's own script; no inline script.
    assert "dashboard/scheduling.js" in content and "data-sortable" in content and "data-filter-for" in content
    assert "<script>" not in content


def test_zone_and_project_reach_the_scheduler(admin_client, ssd_cloud):
    system = ssd_cloud["system"]
    isolated = aggregates.create_aggregate(system, "tenant-a", None)
    aggregates.add_host(system, isolated.id, "node3")
    aggregates.set_metadata(system, isolated.id, {"filter_tenant_id": "project-a"})
    response = explain(admin_client, flavor=ssd_cloud["small"].flavorid, zone="az1", project="project-b")
    decision = response.context["decision"]
    assert decision.request["availability_zone"] == "az1" and decision.project_id == "project-b"
    rows = {row["host"]: row for row in decision.explanation["hosts"]}
    assert rows["node3"]["result"] == "rejected" and rows["node3"]["stage"] == "placement"
    assert "az1" in response.content.decode()


def test_project_name_is_taken_for_its_id(admin_client, ssd_cloud):
    from aggregates.identity import services as identity

    project = identity.ensure_project("tenant-x")
    decision = explain(admin_client, flavor=ssd_cloud["small"].flavorid, project="tenant-x").context["decision"]
    assert decision.project_id == project.id


def test_notes_and_image_are_shown(admin_client, ssd_cloud):
    aggregates.set_metadata(ssd_cloud["system"], ssd_cloud["fast"].id, {"cpu_allocation_ratio": "16.0"})
    image = Image.objects.create(name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2")
    response = explain(admin_client, flavor=ssd_cloud["small"].flavorid, image=str(image.id))
    assert response.status_code == 200
    content = response.content.decode()
    assert 'id="decision-notes"' in content and "cpu_allocation_ratio" in content
    assert response.context["decision"].request["image"] == str(image.id)


def test_no_valid_host_is_said(admin_client, ssd_cloud):
    huge = flavors.create_flavor(ssd_cloud["system"], name="huge", ram=10_000_000, vcpus=1, disk=1)
    response = explain(admin_client, flavor=huge.flavorid)
    content = response.content.decode()
    assert response.context["decision"].explanation["chosen"] == []
    assert "none: no valid host" in content
    assert all('class="result-rejected"' in row for row in host_rows(content).values())


def _field_errors(content, field):
    """The error list right after the field's widget, in its .field block."""
    block = re.search(rf'<div class="field has-error">\s*<label for="id_{field}">.*?</ul>', content, re.S)
    return block.group(0) if block else ""


def test_disabled_flavor_error_is_beside_the_flavor_field(admin_client, ssd_cloud):
    from aggregates.flavors.models import Flavor

    # A flavor disabled after the form listed it: the service refuses it (flavorRef) -> beside "flavor".
    Flavor.objects.filter(pk=ssd_cloud["small"].pk).update(disabled=True)
    response = explain(admin_client, flavor=ssd_cloud["small"].flavorid)
    assert response.status_code == 400
    assert response.context["decision"] is None
    # The choice is no longer offered (the form says so) - or the service refused it: either way beside the field.
    assert "errorlist" in _field_errors(response.content.decode(), "flavor")


def test_service_error_for_zone_is_beside_the_zone_field(admin_client, ssd_cloud, monkeypatch):
    from aggregates.errors import Invalid
    from aggregates.scheduling import services

    def refuse(*args, **kwargs):
        raise Invalid("The requested availability zone is not available", field="availability_zone")

    monkeypatch.setattr(services, "explain_request", refuse)
    response = explain(admin_client, flavor=ssd_cloud["small"].flavorid, zone="az1")
    assert response.status_code == 400
    block = _field_errors(response.content.decode(), "zone")
    assert "The requested availability zone is not available" in block


def test_service_error_for_image_is_beside_the_image_field(admin_client, ssd_cloud, monkeypatch):
    image = Image.objects.create(name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2")
    url = f"/scheduling/?flavor={ssd_cloud['small'].flavorid}&image={image.id}"
    Image.objects.filter(pk=image.pk).update(status=Image.QUEUED)  # not active any more: no longer a choice
    response = admin_client.get(url)
    assert response.status_code == 400
    assert "errorlist" in _field_errors(response.content.decode(), "image")


def test_unreachable_placement_is_a_form_error_not_a_500(admin_client, ssd_cloud, settings):
    settings.PLACEMENT_URL = "http://127.0.0.1:9/placement"
    response = explain(admin_client, flavor=ssd_cloud["small"].flavorid)
    assert response.status_code == 400
    assert 'class="errorlist nonfield"' in response.content.decode()
    assert "Scheduling is not possible now" in response.content.decode()


def test_bad_number_of_instances_is_beside_its_field(admin_client, ssd_cloud):
    response = explain(admin_client, flavor=ssd_cloud["small"].flavorid, num_instances=0)
    assert response.status_code == 400
    assert "errorlist" in _field_errors(response.content.decode(), "num_instances")


def test_decision_page_shows_the_stored_decision_in_the_same_table(admin_client, ssd_cloud):
    decision = explain(admin_client, flavor=ssd_cloud["ssd"].flavorid).context["decision"]
    response = admin_client.get(f"/scheduling/decisions/{decision.uuid}/")
    assert response.status_code == 200
    content = response.content.decode()
    rows = host_rows(content)
    assert set(rows) == {"node1", "node2", "node3"}
    assert "AggregateInstanceExtraSpecsFilter" in rows["node3"]
    assert "ssd.large" in content and "an explanation only" in content
    assert admin_client.get("/scheduling/decisions/not-a-uuid/").status_code == 404
    assert admin_client.get("/scheduling/decisions/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_recent_decisions_are_listed(admin_client, ssd_cloud):
    decision = explain(admin_client, flavor=ssd_cloud["small"].flavorid).context["decision"]
    content = admin_client.get("/scheduling/").content.decode()
    assert f"/scheduling/decisions/{decision.uuid}/" in content


def test_reader_may_explain_and_read_decisions(reader_client, ssd_cloud):
    response = explain(reader_client, flavor=ssd_cloud["small"].flavorid)
    assert response.status_code == 200 and response.context["decision"] is not None
    decision = response.context["decision"]
    assert reader_client.get(f"/scheduling/decisions/{decision.uuid}/").status_code == 200


def test_disabled_host_is_rejected_with_its_reason(admin_client, ssd_cloud):
    service = Service.objects.get(host="node2", binary="nova-compute")
    hosts.update_service(ssd_cloud["system"], service.uuid, status="disabled", disabled_reason="disk swap")
    rows = {
        r["host"]: r
        for r in explain(admin_client, flavor=ssd_cloud["small"].flavorid).context["decision"].explanation["hosts"]
    }
    assert rows["node2"]["result"] == "rejected" and "disk swap" in rows["node2"]["reason"]


def test_anonymous_is_sent_to_log_in(client, db):
    response = client.get("/scheduling/")
    assert response.status_code == 302 and "/login/" in response["Location"]
