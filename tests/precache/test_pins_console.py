"""The console's pinned images page: each pinned image with every host's
state, pinning and unpinning, the retry (a re-check of one host), readers
seeing without changing."""

from aggregates.precache import running
from aggregates.precache.drivers import host_cache_dir
from aggregates.precache.models import ImageCacheJob, PinnedImage


def run_queued():
    for pk in ImageCacheJob.objects.filter(status="queued").values_list("pk", flat=True):
        running.run_job(pk)


def test_pin_see_states_retry_and_unpin(admin_client, make_aggregate, make_image):
    agg = make_aggregate()
    image = make_image("ubuntu")
    url = f"/aggregates/{agg.id}/pinned-images/"
    assert url in admin_client.get(f"/aggregates/{agg.id}/").content.decode()
    page = admin_client.get(url).content.decode()
    assert "No pinned image" in page and "ubuntu" in page  # offered in the form
    response = admin_client.post(url, {"image_id": str(image.id), "replaces": ""})
    assert response.status_code == 302 and response["Location"] == url
    page = admin_client.get(url).content.decode()
    assert page.count(">in progress<") == 2
    run_queued()
    page = admin_client.get(url).content.decode()
    assert page.count('<span class="badge ok">cached</span>') == 2 and "on every host" in page
    assert ">Retry<" not in page

    (host_cache_dir("h2") / str(image.id)).unlink()
    response = admin_client.post(f"{url}recheck/", {"host": "h2"})
    assert response.status_code == 302
    job = ImageCacheJob.objects.get(status="queued")
    assert list(job.host_items.values_list("host", flat=True)) == ["h2"]
    job_page = admin_client.get(f"/images/cache-jobs/{job.uuid}/").content.decode()
    assert f'(<a href="{url}">pinned images</a>)' in job_page
    run_queued()
    assert (host_cache_dir("h2") / str(image.id)).is_file()

    refused = admin_client.post(url, {"image_id": str(image.id), "replaces": ""})
    assert refused.status_code == 400
    assert "already pinned" in refused.content.decode()
    response = admin_client.post(f"{url}{image.id}/unpin/")
    assert response.status_code == 302
    assert not PinnedImage.objects.exists()


def test_errors_show_with_a_retry(admin_client, make_aggregate, make_image, settings):
    agg = make_aggregate()
    image = make_image("ubuntu")
    admin_client.post(f"/aggregates/{agg.id}/pinned-images/", {"image_id": str(image.id)})
    settings.CACHE_DRIVER = "nonesuch"
    run_queued()
    page = admin_client.get(f"/aggregates/{agg.id}/pinned-images/").content.decode()
    assert page.count('<span class="badge bad">error</span>') == 2
    assert "unknown cache driver" in page
    assert page.count(">Retry<") == 2


def test_readers_see_but_do_not_change(admin_client, reader_client, make_aggregate, make_image):
    agg = make_aggregate()
    image = make_image("ubuntu")
    admin_client.post(f"/aggregates/{agg.id}/pinned-images/", {"image_id": str(image.id)})
    page = reader_client.get(f"/aggregates/{agg.id}/pinned-images/").content.decode()
    assert "ubuntu" in page and "Unpin" not in page and "Pin an image" not in page
    assert reader_client.post(f"/aggregates/{agg.id}/pinned-images/recheck/").status_code == 403
    assert reader_client.post(f"/aggregates/{agg.id}/pinned-images/{image.id}/unpin/").status_code == 403
    assert PinnedImage.objects.count() == 1
    assert admin_client.get("/aggregates/9999/pinned-images/").status_code == 404
