"""The beat's samples of capacity by flavor: taken when due, pruned after
CAPACITY_HISTORY_DAYS, read back as each group's history, exported as
corral_capacity_servers from the latest sample, and the task registered and
scheduled."""

from datetime import timedelta

from django.test import Client
from django.utils import timezone
from django_celery_beat.models import PeriodicTask
from prometheus_client.parser import text_string_to_metric_families

from aggregates.capacity import services
from aggregates.capacity.models import CapacitySample
from config.celery import app


def test_a_sample_per_group_when_due_and_old_ones_pruned(cloud, three_hosts, settings):
    settings.CAPACITY_SAMPLE_SECONDS, settings.CAPACITY_HISTORY_DAYS = 600, 2
    start = timezone.now()
    # z1, z2 (zones); ssd, z1, z2 (aggregates)
    assert services.sample(start) == 5
    assert services.sample(start + timedelta(seconds=60)) == 0  # not due
    zone = CapacitySample.objects.get(scope="availability_zone", name="z1")
    assert (zone.zone, zone.hosts) == ("z1", 2)
    assert zone.figures["plain"] == {"id": three_hosts[0].flavorid, "servers": 8, "limited_by": "VCPU"}
    cloud.disable("B")
    assert services.sample(start + timedelta(seconds=600)) == 5
    history = services.history([("availability_zone", "z1")])
    series = {s.flavor: [n for _, n in s.points] for s in history[("availability_zone", "z1")]}
    assert series == {"plain": [8, 4], "fast": [4, 4]}
    # Three days on, the two first samples are older than CAPACITY_HISTORY_DAYS.
    assert services.sample(start + timedelta(days=3)) == 5
    assert CapacitySample.objects.count() == 5
    assert {row.name for row in services.latest()} == {"z1", "z2", "ssd"}


def test_the_metric_reads_the_latest_sample(cloud, three_hosts, settings):
    settings.METRICS_ENABLED, settings.METRICS_ALLOWED_NETWORKS = True, ["127.0.0.0/8"]
    services.sample()
    response = Client(REMOTE_ADDR="127.0.0.1").get("/metrics")
    assert response.status_code == 200
    found = {
        tuple(sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
        if sample.name == "corral_capacity_servers"
    }
    assert found[(("aggregate", ""), ("flavor", "plain"), ("zone", "z1"))] == 8
    assert found[(("aggregate", "ssd"), ("flavor", "fast"), ("zone", ""))] == 4
    assert found[(("aggregate", "z2"), ("flavor", "fast"), ("zone", "z2"))] == 0
    assert len(found) == 10  # 2 flavors x (2 zones + 3 aggregates)


def test_the_task_is_registered_and_scheduled(db):
    app.loader.import_default_modules()
    assert "corral.capacity.sample" in app.tasks
    assert PeriodicTask.objects.filter(task="corral.capacity.sample", enabled=True).exists()


def test_the_command_for_cron_without_a_broker(cloud, three_hosts):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("sample_capacity", stdout=out)
    assert out.getvalue().strip() == "Recorded 5 group(s)."
    call_command("sample_capacity", stdout=out)
    assert out.getvalue().strip().endswith("Not due: the last sample is recent.")
    call_command("sample_capacity", "--force", stdout=out)
    assert CapacitySample.objects.filter(scope="availability_zone", name="z1").count() == 2
