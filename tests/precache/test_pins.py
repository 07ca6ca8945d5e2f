"""Pinned images (the pre-cache policy) through Corral's API, on the
in-process cache driver: pinning caches on every host, a joining host gets
them, the re-check re-caches what went missing, a replacement rolls out
and the old image is unpinned once every host has the new one, a killed
job's worker is resumed."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from aggregates.audit.models import Event
from aggregates.precache import running
from aggregates.precache.drivers import host_cache_dir
from aggregates.precache.models import CacheCheck, ImageCacheHost, ImageCacheJob, ImageCacheResult, PinnedImage


def pins_url(aggregate_id, tail=""):
    return f"/os-aggregates/{aggregate_id}/pinned-images{tail}"


def pin(api, aggregate_id, image_id, replaces=None):
    body = {"image_id": str(image_id)}
    if replaces is not None:
        body["replaces"] = str(replaces)
    return api.post(pins_url(aggregate_id), {"pinned_image": body})


def run_queued():
    for pk in ImageCacheJob.objects.filter(status="queued").order_by("id").values_list("pk", flat=True):
        running.run_job(pk)


def states(api, aggregate_id):
    """{image id: {host: state}} as the API shows them."""
    response = api.get(pins_url(aggregate_id))
    assert response.status_code == 200, response.content
    return {p["image_id"]: {h["host"]: h["state"] for h in p["hosts"]} for p in response.json()["pinned_images"]}


def recheck(api, aggregate_id, hosts=None):
    body = {"recheck": {"hosts": hosts} if hosts else {}}
    response = api.post(pins_url(aggregate_id, "/recheck"), body)
    assert response.status_code == 202, response.content
    return response


def test_pin_caches_on_every_host(admin_api, agg, image):
    response = pin(admin_api, agg.id, image.id)
    assert response.status_code == 201, response.content
    body = response.json()["pinned_image"]
    assert body["image_id"] == str(image.id)
    assert body["image_name"] == "cirros"
    assert body["replaces"] is None
    assert {h["host"]: h["state"] for h in body["hosts"]} == {"h1": "in_progress", "h2": "in_progress"}
    job = ImageCacheJob.objects.get()
    assert job.pinned and job.status == "queued" and job.total == 2
    run_queued()
    assert states(admin_api, agg.id) == {str(image.id): {"h1": "cached", "h2": "cached"}}
    assert (host_cache_dir("h1") / str(image.id)).is_file()
    assert admin_api.get(pins_url(agg.id, f"/{image.id}")).json()["pinned_image"]["image_id"] == str(image.id)
    event = Event.objects.get(event_type="aggregate.pinned_image.create")
    assert event.payload["image_id"] == str(image.id)


def test_pin_refusals_change_nothing(admin_api, member_api, agg, image, make_image):
    assert pin(member_api, agg.id, image.id).status_code == 403
    assert admin_api.post(pins_url(agg.id), {"pinned_image": {"image_id": "nope"}}).status_code == 400
    assert admin_api.post(pins_url(agg.id), {"pinned_image": {"image_id": str(image.id), "x": 1}}).status_code == 400
    assert pin(admin_api, agg.id, uuid.uuid4()).status_code == 400
    assert pin(admin_api, agg.id + 100, image.id).status_code == 404
    assert pin(admin_api, agg.id, make_image("empty", data=None).id).status_code == 400
    other = make_image("other")
    refused = pin(admin_api, agg.id, image.id, replaces=other.id)  # other is not pinned here
    assert refused.status_code == 400
    assert "is not pinned" in refused.json()["badRequest"]["message"]
    assert not PinnedImage.objects.exists() and not ImageCacheJob.objects.exists()
    assert pin(admin_api, agg.id, image.id).status_code == 201
    conflict = pin(admin_api, agg.id, image.id)
    assert conflict.status_code == 409
    assert PinnedImage.objects.count() == 1 and ImageCacheJob.objects.count() == 1
    assert admin_api.get(pins_url(agg.id)).status_code == 200
    assert member_api.get(pins_url(agg.id)).status_code == 403


def test_metadata_changes_leave_pins_alone(admin_api, agg, image):
    """The stock CLI's ``aggregate set --property`` / ``unset`` cannot touch pins."""
    pin(admin_api, agg.id, image.id)
    response = admin_api.post(f"/os-aggregates/{agg.id}/action", {"set_metadata": {"metadata": {"ssd": "true"}}})
    assert response.status_code == 200
    response = admin_api.post(f"/os-aggregates/{agg.id}/action", {"set_metadata": {"metadata": {"ssd": None}}})
    assert response.status_code == 200
    assert list(states(admin_api, agg.id)) == [str(image.id)]
    assert "pinned" not in str(admin_api.get(f"/os-aggregates/{agg.id}").json())


def test_unpin(admin_api, agg, image):
    pin(admin_api, agg.id, image.id)
    assert admin_api.delete(pins_url(agg.id, f"/{image.id}")).status_code == 204
    assert admin_api.delete(pins_url(agg.id, f"/{image.id}")).status_code == 404
    assert admin_api.get(pins_url(agg.id, f"/{image.id}")).status_code == 404
    assert states(admin_api, agg.id) == {}


def test_a_joining_host_gets_the_pinned_images(admin_api, agg, image, make_host, make_image):
    second = make_image("second")
    pin(admin_api, agg.id, image.id)
    pin(admin_api, agg.id, second.id)
    run_queued()
    make_host("h3")
    response = admin_api.post(f"/os-aggregates/{agg.id}/action", {"add_host": {"host": "h3"}})
    assert response.status_code == 200, response.content
    job = ImageCacheJob.objects.filter(status="queued").get()
    assert job.pinned
    assert list(job.host_items.values_list("host", flat=True)) == ["h3"]
    assert sorted(job.image_ids) == sorted([str(image.id), str(second.id)])
    assert states(admin_api, agg.id)[str(image.id)]["h3"] == "in_progress"
    run_queued()
    assert states(admin_api, agg.id) == {
        str(i.id): {"h1": "cached", "h2": "cached", "h3": "cached"} for i in (image, second)
    }
    # A refused join starts nothing.
    make_host("h4")
    admin_api.post("/os-aggregates", {"aggregate": {"name": "z", "availability_zone": "zone-b"}})
    admin_api.post(f"/os-aggregates/{agg.id}/action", {"set_metadata": {"metadata": {"availability_zone": "zone-a"}}})
    before = ImageCacheJob.objects.count()
    assert admin_api.post("/os-aggregates/1234/action", {"add_host": {"host": "h4"}}).status_code == 404
    assert ImageCacheJob.objects.count() == before


def test_recheck_recaches_what_went_missing(admin_api, agg, image):
    pin(admin_api, agg.id, image.id)
    run_queued()
    (host_cache_dir("h2") / str(image.id)).unlink()
    response = recheck(admin_api, agg.id)
    body = response.json()["recheck"]
    assert body["hosts_asked"] == ["h1", "h2"] and body["hosts_unreachable"] == {}
    job = ImageCacheJob.objects.get(uuid=body["job_id"])
    assert response["Location"].endswith(f"/os-image-cache-jobs/{job.uuid}")
    assert list(job.host_items.values_list("host", flat=True)) == ["h2"]
    assert CacheCheck.objects.get(host="h2").state == "missing"
    assert states(admin_api, agg.id) == {str(image.id): {"h1": "cached", "h2": "in_progress"}}
    # A second re-check while the job is queued starts no other job.
    assert recheck(admin_api, agg.id).json()["recheck"]["job_id"] is None
    run_queued()
    assert (host_cache_dir("h2") / str(image.id)).is_file()
    assert states(admin_api, agg.id) == {str(image.id): {"h1": "cached", "h2": "cached"}}
    # Nothing missing: nothing to do.
    assert recheck(admin_api, agg.id).json()["recheck"]["job_id"] is None


def test_recheck_one_host_and_a_down_host(admin_api, agg, image):
    pin(admin_api, agg.id, image.id)
    run_queued()
    for host in ("h1", "h2"):
        (host_cache_dir(host) / str(image.id)).unlink()
    body = recheck(admin_api, agg.id, hosts=["h1"]).json()["recheck"]
    assert body["hosts_asked"] == ["h1"]
    job = ImageCacheJob.objects.get(uuid=body["job_id"])
    assert list(job.host_items.values_list("host", flat=True)) == ["h1"]
    response = admin_api.post(pins_url(agg.id, "/recheck"), {"recheck": {"hosts": ["nope"]}})
    assert response.status_code == 400
    run_queued()
    from aggregates.hosts.models import Service

    Service.objects.filter(host="h2").update(forced_down=True)
    body = recheck(admin_api, agg.id).json()["recheck"]
    assert body["hosts_unreachable"] == {"h2": "the compute service is down"}
    assert body["job_id"] is None  # h1 holds it; h2 cannot be asked
    response = admin_api.get(pins_url(agg.id)).json()["pinned_images"][0]["hosts"]
    h2 = [h for h in response if h["host"] == "h2"][0]
    assert h2["state"] == "error" and "compute service is down" in h2["reason"]


def test_a_newer_image_of_the_same_name_replaces_the_old(admin_api, agg, make_image):
    old = make_image("ubuntu")
    pin(admin_api, agg.id, old.id)
    run_queued()
    new = make_image("ubuntu", data=b"newer-disk" * 1000)
    make_image("debian")  # another name: ignored
    body = recheck(admin_api, agg.id).json()["recheck"]
    assert body["pinned"] == [str(new.id)] and body["unpinned"] == []
    assert PinnedImage.objects.get(image_id=new.id).replaces == old.id
    assert states(admin_api, agg.id)[str(new.id)] == {"h1": "in_progress", "h2": "in_progress"}
    # Rolled out on one host only: the old stays pinned.
    job = ImageCacheJob.objects.get(status="queued")
    ImageCacheResult.objects.filter(host_item__job=job, host_item__host="h2").update(
        status="error", error="disk full", finished_at=timezone.now()
    )
    ImageCacheHost.objects.filter(job=job, host="h2").update(status="error", finished_at=timezone.now())
    running.run_job(job.pk)
    body = recheck(admin_api, agg.id, hosts=["h1"]).json()["recheck"]
    assert body["unpinned"] == []
    assert set(states(admin_api, agg.id)) == {str(old.id), str(new.id)}
    # The re-check re-caches it on h2; the next one unpins the old image.
    body = recheck(admin_api, agg.id).json()["recheck"]
    assert body["job_id"] is not None
    run_queued()
    body = recheck(admin_api, agg.id).json()["recheck"]
    assert body["unpinned"] == [str(old.id)]
    assert states(admin_api, agg.id) == {str(new.id): {"h1": "cached", "h2": "cached"}}
    assert PinnedImage.objects.get().replaces is None
    event = Event.objects.filter(event_type="aggregate.pinned_image.delete").get()
    assert event.payload["image_id"] == str(old.id) and "replaced by" in event.payload["reason"]


def test_an_explicit_replacement(admin_api, agg, make_image):
    old, new = make_image("centos-9"), make_image("rocky-9")
    pin(admin_api, agg.id, old.id)
    response = pin(admin_api, agg.id, new.id, replaces=old.id)
    assert response.status_code == 201
    assert response.json()["pinned_image"]["replaces"] == str(old.id)
    run_queued()
    assert recheck(admin_api, agg.id).json()["recheck"]["unpinned"] == [str(old.id)]
    assert list(states(admin_api, agg.id)) == [str(new.id)]


def test_a_pinned_job_whose_worker_died_is_resumed(admin_api, agg, image):
    """A killed worker leaves the job running with its lease expired: the
    drain resumes it and the hosts end up cached, nothing done twice."""
    pin(admin_api, agg.id, image.id)
    job = ImageCacheJob.objects.get()
    running.run_job(job.pk)
    h1_before = ImageCacheResult.objects.get(host_item__job=job, host_item__host="h1").finished_at
    ImageCacheHost.objects.filter(job=job, host="h2").update(status="caching", finished_index=None, finished_at=None)
    ImageCacheResult.objects.filter(host_item__job=job, host_item__host="h2").update(status="caching", bytes=None)
    (host_cache_dir("h2") / str(image.id)).unlink()
    ImageCacheJob.objects.filter(pk=job.pk).update(
        status="running", finished_at=None, lease_expires_at=timezone.now() - timedelta(minutes=5), attempts=1
    )
    assert states(admin_api, agg.id)[str(image.id)]["h2"] == "in_progress"
    assert running.drain_jobs() == {"resumed": 1, "failed": 0}
    assert ImageCacheResult.objects.get(host_item__job=job, host_item__host="h1").finished_at == h1_before
    assert states(admin_api, agg.id) == {str(image.id): {"h1": "cached", "h2": "cached"}}
    assert (host_cache_dir("h2") / str(image.id)).is_file()


def test_the_beat_task_rechecks_every_aggregate(admin_api, make_aggregate, image):
    from aggregates.precache import tasks

    first = make_aggregate("a1", hosts=("h1",))
    make_aggregate("a2", hosts=("h2",))  # pins nothing
    pin(admin_api, first.id, image.id)
    run_queued()
    (host_cache_dir("h1") / str(image.id)).unlink()
    assert tasks.recheck_pins.delay().get() == {"aggregates": 1, "jobs": 1, "failed": 0, "released": 0}
    run_queued()
    assert (host_cache_dir("h1") / str(image.id)).is_file()


def test_a_deleted_image_shows_an_error_then_is_unpinned(admin_api, agg, image, system):
    from aggregates.images import services as image_services

    pin(admin_api, agg.id, image.id)
    run_queued()
    image_services.delete_image(system, str(image.id))
    hosts = admin_api.get(pins_url(agg.id)).json()["pinned_images"][0]["hosts"]
    assert {(h["state"], h["reason"]) for h in hosts} == {("error", "the image no longer exists")}
    body = recheck(admin_api, agg.id).json()["recheck"]
    assert body["unpinned"] == [str(image.id)] and body["job_id"] is None
    assert states(admin_api, agg.id) == {}


def test_the_management_command_rechecks(admin_api, agg, image):
    from io import StringIO

    from django.core.management import CommandError, call_command

    pin(admin_api, agg.id, image.id)
    run_queued()
    (host_cache_dir("h1") / str(image.id)).unlink()
    out = StringIO()
    call_command("recheck_pinned_images", "--aggregate", str(agg.id), stdout=out)
    assert "2 host(s) answered; job " in out.getvalue()
    call_command("recheck_pinned_images", stdout=out)
    assert "Re-checked 1 aggregate(s): 0 job(s) started, 0 failed." in out.getvalue()  # the job is queued already
    with pytest.raises(CommandError, match="could not be found"):
        call_command("recheck_pinned_images", "--aggregate", "9999")


def test_a_host_that_leaves_is_told_its_pins_are_gone(admin_api, agg, image, make_host, monkeypatch):
    from aggregates.precache import drivers, pins

    told = []
    monkeypatch.setattr(drivers.InProcessDriver, "set_pinned", lambda self, host, ids: told.append((host.host, ids)))
    make_host("h3")
    admin_api.post(f"/os-aggregates/{agg.id}/action", {"add_host": {"host": "h3"}})
    pin(admin_api, agg.id, image.id)
    run_queued()
    # h3 leaves before any re-check: it was told of the pin by its job, so it is told again.
    assert admin_api.post(f"/os-aggregates/{agg.id}/action", {"remove_host": {"host": "h3"}}).status_code == 200
    counts = pins.recheck_all()
    assert counts["released"] == 1
    assert ("h3", []) in told
    assert sorted((h, ids) for h, ids in told if h != "h3") == [("h1", [str(image.id)]), ("h2", [str(image.id)])]
    assert not CacheCheck.objects.filter(host="h3").exists()
    told.clear()
    assert pins.recheck_all()["released"] == 0
    assert "h3" not in {h for h, _ in told}
