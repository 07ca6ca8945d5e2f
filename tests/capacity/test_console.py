"""The console's capacity page (test client): the current table with what
runs out first, for a project and after losing hosts, the history drawn as
one line per flavor per group, bad input shown on the page, the
navigation, and a sample taken by the page without a broker."""

import re
from datetime import timedelta

from django.utils import timezone

from aggregates.capacity import services
from aggregates.capacity.models import CapacitySample

from .conftest import project_id


def cell(html, scope, name, flavor):
    row = re.search(rf'<tr data-scope="{scope}" data-name="{re.escape(name)}">(.*?)</tr>', html, re.S).group(1)
    found = re.search(rf'data-flavor="{re.escape(flavor)}"><strong>(\d+)</strong><div[^>]*>([^<]*)</div>', row)
    return int(found.group(1)), found.group(2)


def test_the_table_and_one_line_per_flavor_per_group(cloud, admin_client, three_hosts, settings):
    start = timezone.now() - timedelta(hours=2)
    services.sample(start, force=True)
    cloud.disable("B")
    services.sample(start + timedelta(hours=1), force=True)
    services.SAMPLE_WITHOUT_BROKER.last = float("inf")  # this test's samples only
    response = admin_client.get("/capacity/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<a href="/capacity/" class="active">Capacity</a>' in html
    assert cell(html, "zone", "z1", "plain") == (4, "VCPU")  # B disabled
    assert cell(html, "zone", "z2", "fast") == (0, "AggregateInstanceExtraSpecsFilter")
    assert cell(html, "aggregate", "ssd", "fast") == (4, "VCPU")
    chart = re.search(
        r'<figure class="capacity-chart" data-scope="availability_zone" data-name="z1">(.*?)</figure>', html, re.S
    )
    lines = dict(re.findall(r'points="([^"]+)" data-flavor="([^"]+)"', chart.group(1)))
    assert sorted(lines.values()) == ["fast", "plain"]
    plain = next(points for points, flavor in lines.items() if flavor == "plain").split()
    assert len(plain) == 2  # two samples: 8 then 4, the second point lower on the chart
    assert float(plain[0].split(",")[1]) < float(plain[1].split(",")[1])
    assert "2 samples" in chart.group(1)


def test_for_a_project_after_losing_a_host_and_bad_input(cloud, admin_client, three_hosts):
    html = admin_client.get("/capacity/?lose_hosts=1").content.decode()
    assert cell(html, "zone", "z1", "plain") == (4, "VCPU")  # A and B idle: A goes first by name
    assert "losing A<" in html
    cloud.aggregate("private", ["C"], filter_tenant_id=project_id("demo"))
    assert cell(admin_client.get("/capacity/").content.decode(), "zone", "z2", "plain")[0] == 0
    html = admin_client.get(f"/capacity/?project={project_id('demo')}").content.decode()
    assert cell(html, "zone", "z2", "plain") == (4, "VCPU")
    html = admin_client.get("/capacity/?lose_hosts=-1").content.decode()
    assert "lose_hosts must be a whole number" in html and 'class="capacity-table"' not in html
    html = admin_client.get("/capacity/?project=nobody").content.decode()
    assert "Project ID nobody is not a valid project." in html


def test_without_a_broker_the_page_takes_a_sample_when_due(cloud, admin_client, three_hosts):
    services.SAMPLE_WITHOUT_BROKER.reset()
    assert admin_client.get("/capacity/").status_code == 200
    assert CapacitySample.objects.filter(scope="availability_zone", name="z1").count() == 1
    assert admin_client.get("/capacity/").status_code == 200
    assert CapacitySample.objects.filter(scope="availability_zone", name="z1").count() == 1  # not due again
