"""POST /os-aggregates/{id}/images: Nova's order of checks and codes per
microversion, the job it creates, and GET /os-image-cache-jobs."""

import time
import uuid

import pytest
from django.db import connection

from aggregates.precache import running, services
from aggregates.precache.models import ImageCacheJob, ImageCacheResult

V = "2.81"


def post_images(api, aggregate_id, body, version=V, **kw):
    return api.post(f"/os-aggregates/{aggregate_id}/images", body, version=version, **kw)


def cache_body(*ids):
    return {"cache": [{"id": str(i)} for i in ids]}


def test_202_empty_body_location_and_job(admin_api, agg, image):
    response = post_images(admin_api, agg.id, cache_body(image.id))
    assert response.status_code == 202, response.content
    assert response.content == b""
    job = ImageCacheJob.objects.get()
    assert response["Location"].endswith(f"/compute/v2.1/os-image-cache-jobs/{job.uuid}")
    assert job.status == ImageCacheJob.QUEUED
    assert job.total == 2
    assert sorted(job.host_items.values_list("host", flat=True)) == ["h1", "h2"]


def test_job_json_after_run(admin_api, agg, image):
    post_images(admin_api, agg.id, cache_body(image.id))
    job = ImageCacheJob.objects.get()
    running.run_job(job.pk)
    response = admin_api.get(f"/os-image-cache-jobs/{job.uuid}")
    assert response.status_code == 200
    body = response.json()["job"]
    assert body["id"] == str(job.uuid)
    assert body["aggregate_id"] == agg.id
    assert body["aggregate_uuid"] == str(agg.uuid)
    assert body["status"] == "completed"
    assert (body["total"], body["done"], body["percent"]) == (2, 2, 100)
    assert body["created_at"] and body["started_at"] and body["finished_at"]
    assert [h["host"] for h in body["hosts"]] == ["h1", "h2"]
    first = body["hosts"][0]["images"][0]
    assert first["id"] == str(image.id)
    assert first["status"] == "cached"
    assert first["error"] is None
    assert first["bytes"] == image.size
    assert first["seconds"] is not None
    listing = admin_api.get("/os-image-cache-jobs").json()["jobs"]
    assert [j["id"] for j in listing] == [str(job.uuid)]
    assert admin_api.get(f"/os-image-cache-jobs?aggregate_id={agg.id + 1}").json()["jobs"] == []
    assert admin_api.get("/os-image-cache-jobs?status=failed").json()["jobs"] == []


def test_route_not_there_before_281(admin_api, agg, image):
    response = post_images(admin_api, agg.id, cache_body(image.id), version="2.80")
    assert response.status_code == 404
    assert "itemNotFound" in response.json()
    assert not ImageCacheJob.objects.exists()


def test_schema_before_policy(member_api, agg):
    response = post_images(member_api, agg.id, {"cache": []})
    assert response.status_code == 400
    assert "badRequest" in response.json()
    response = post_images(member_api, agg.id, cache_body(uuid.uuid4()))
    assert response.status_code == 403
    assert "forbidden" in response.json()


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"cache": []},
        {"cache": "x"},
        {"cache": [{"id": "not-a-uuid"}]},
        {"cache": [{"id": 5}]},
        {"cache": [{"id": str(uuid.uuid4()), "extra": 1}]},
        {"cache": [{}]},
        {"cache": [{"id": str(uuid.uuid4())}], "other": 1},
        [],
        "text",
    ],
)
def test_bad_bodies_400(admin_api, agg, body):
    response = post_images(admin_api, agg.id, body)
    assert response.status_code == 400, response.content
    assert "badRequest" in response.json()
    assert not ImageCacheJob.objects.exists()


def test_malformed_json_400(admin_api, agg):
    response = admin_api.post(f"/os-aggregates/{agg.id}/images", raw="{nope", version=V)
    assert response.status_code == 400
    assert "badRequest" in response.json()


def test_non_integer_aggregate_id_400_after_policy(admin_api, member_api, image):
    assert post_images(member_api, "abc", cache_body(image.id)).status_code == 403
    response = post_images(admin_api, "abc", cache_body(image.id))
    assert response.status_code == 400
    assert "must be an integer" in response.json()["badRequest"]["message"]


def test_duplicates_before_unknown_aggregate(admin_api, image):
    response = post_images(admin_api, 999999, cache_body(image.id, image.id))
    assert response.status_code == 400
    assert response.json()["badRequest"]["message"] == "Duplicate images in request"
    upper = str(image.id).upper()
    response = post_images(admin_api, 999999, {"cache": [{"id": str(image.id)}, {"id": upper}]})
    assert response.status_code == 400


def test_unknown_aggregate_404_before_unknown_image(admin_api):
    response = post_images(admin_api, 999999, cache_body(uuid.uuid4()))
    assert response.status_code == 404
    assert "itemNotFound" in response.json()


def test_unknown_image_400(admin_api, agg, image):
    missing = uuid.uuid4()
    response = post_images(admin_api, agg.id, cache_body(image.id, missing))
    assert response.status_code == 400
    assert str(missing) in response.json()["badRequest"]["message"]
    assert not ImageCacheJob.objects.exists()


def test_image_without_data_400(admin_api, agg, make_image):
    empty = make_image("empty", data=None)
    response = post_images(admin_api, agg.id, cache_body(empty.id))
    assert response.status_code == 400
    assert not ImageCacheJob.objects.exists()


def test_aggregate_without_hosts_accepted(admin_api, make_aggregate, image):
    agg = make_aggregate("empty", hosts=())
    assert post_images(admin_api, agg.id, cache_body(image.id)).status_code == 202
    job = running.run_job(ImageCacheJob.objects.get().pk)
    assert job.status == "completed"
    assert job.percent == 100


def test_jobs_admin_only(admin_api, reader_api, agg, image):
    post_images(admin_api, agg.id, cache_body(image.id))
    job = ImageCacheJob.objects.get()
    assert reader_api.get("/os-image-cache-jobs").status_code == 403
    assert reader_api.get(f"/os-image-cache-jobs/{job.uuid}").status_code == 403
    assert admin_api.get(f"/os-image-cache-jobs/{uuid.uuid4()}").status_code == 404
    assert admin_api.get("/os-image-cache-jobs/not-a-uuid").status_code == 404
    assert admin_api.get("/os-image-cache-jobs?status=bogus").status_code == 400
    assert admin_api.get("/os-image-cache-jobs?limit=-1").status_code == 400
    assert admin_api.get("/os-image-cache-jobs?color=red").status_code == 400


def test_other_methods_405(admin_api, agg):
    response = admin_api.get(f"/os-aggregates/{agg.id}/images", version=V)
    assert response.status_code == 405
    assert ImageCacheResult.objects.count() == 0


def test_huge_and_negative_aggregate_ids(admin_api, image):
    for value in ("99999999999999999999999", "-1", "1e3", "%00"):
        response = post_images(admin_api, value, cache_body(image.id))
        assert response.status_code in (400, 404), (value, response.content)
        assert set(response.json()) <= {"badRequest", "itemNotFound"}
    assert not ImageCacheJob.objects.exists()


def test_job_json_follows_each_image(transactional_db, system, make_aggregate, make_image, monkeypatch):
    """The job's done count moves with every image, not only with every host."""
    from aggregates.precache.drivers import ImageResult

    seen = []

    class Recording:
        def cache(self, host, images, timeout, on_image_done):
            results = []
            for image in images:
                result = ImageResult(image.id, "cached")
                on_image_done(result)
                results.append(result)
                time.sleep(0.3)
                seen.append(ImageCacheJob.objects.values_list("done", flat=True).get())
            connection.close()  # this thread's own connection
            return results

        def cached_images(self, host):
            return []

    agg = make_aggregate(hosts=("h1",))
    a, b = make_image("a"), make_image("b", data=b"b" * 100)
    monkeypatch.setattr(running, "dispatch", lambda job_pk: None)  # this test runs the job itself
    job = services.request_image_cache(system, agg.id, [str(a.id), str(b.id)])
    running.run_job(job.pk, driver=Recording())
    assert seen == [1, 2]
