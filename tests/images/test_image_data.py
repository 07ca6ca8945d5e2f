"""Image data: the streamed upload (hashes, status transitions, size limit,
interruptions) and the download (whole, ranges, Content-MD5)."""

import hashlib
import tracemalloc

import pytest

from aggregates.audit.models import Event
from aggregates.identity.caller import Caller
from aggregates.images import services, storage
from aggregates.images.models import Image

from .conftest import glance_error

MiB = 1024 * 1024


class BodyStream:
    """A WSGI input of ``total`` bytes, produced on demand (never held whole):
    records every read, calls ``hook(offset)`` once half of it was read,
    and can end early (``end_at``) or fail (``fail_at``) like a client that
    went away."""

    def __init__(self, total, hook=None, end_at=None, fail_at=None):
        self.total, self.hook, self.end_at, self.fail_at = total, hook, end_at, fail_at
        self.offset = 0
        self.reads = []
        self.md5, self.sha512 = hashlib.md5(), hashlib.sha512()
        self.hooked = False

    def _byte_at(self, start, n):
        return bytes((start + i) * 7 % 251 for i in range(n))

    def read(self, size=-1):
        self.reads.append(size)
        limit = self.total if self.end_at is None else self.end_at
        if size is None or size < 0:
            size = limit - self.offset
        if self.fail_at is not None and self.offset >= self.fail_at:
            raise ConnectionResetError("client went away")
        if self.hook and not self.hooked and self.offset >= self.total // 2:
            self.hooked = True
            self.hook(self.offset)
        size = min(size, limit - self.offset)
        if size <= 0:
            return b""
        chunk = self._byte_at(self.offset, size)
        self.offset += size
        self.md5.update(chunk)
        self.sha512.update(chunk)
        return chunk

    def readline(self, *args):
        return self.read(*args)


def put_stream(client, image_id, stream, content_length=None, chunked=False):
    extra = {"wsgi.input": stream, "CONTENT_TYPE": "application/octet-stream"}
    if content_length is not None:
        extra["CONTENT_LENGTH"] = str(content_length)
    headers = {"Transfer-Encoding": "chunked"} if chunked else {}
    return client.request("put", f"/images/{image_id}/file", headers=headers, **extra)


def files_in(store):
    return sorted(p.name for p in store.iterdir()) if store.exists() else []


# --- upload ----------------------------------------------------------------------


@pytest.mark.heavy
def test_upload_streams_to_disk_and_reports_glances_hashes(member, image_store):
    image = member.create()
    total = 4 * MiB + 123
    seen = {}

    def halfway(offset):
        row = Image.objects.get(pk=image["id"])
        temp = storage.temp_files(image["id"])
        seen.update(status=row.status, temps=len(temp), temp_size=temp[0].stat().st_size)
        seen["final_exists"] = storage.path_of(image["id"]).exists()

    stream = BodyStream(total, hook=halfway)
    tracemalloc.start()
    try:
        response = put_stream(member, image["id"], stream, content_length=total)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 204, response.content
    assert response.content == b""
    # Mid-upload: saving, written to one temporary file, nothing in place yet.
    assert seen["status"] == "saving" and seen["temps"] == 1 and not seen["final_exists"]
    assert 0 < seen["temp_size"] < total
    # Read in bounded chunks, never whole; memory stays far below the image's size.
    assert stream.offset == total and all(0 < size <= storage.CHUNK_SIZE for size in stream.reads)
    assert peak < total / 4, peak
    body = member.get(f"/images/{image['id']}").json()
    assert body["status"] == "active" and body["size"] == total
    assert body["checksum"] == stream.md5.hexdigest()
    assert (body["os_hash_algo"], body["os_hash_value"]) == ("sha512", stream.sha512.hexdigest())
    assert files_in(image_store) == [image["id"]]
    assert storage.path_of(image["id"]).stat().st_size == total
    event = Event.objects.get(event_type="image.upload")
    assert event.payload["checksum"] == body["checksum"] and event.payload["size"] == total


def test_small_upload_matches_hashlib(member):
    image = member.create()
    data = b"cirros image bytes\n" * 1000
    response = member.put_file(image["id"], data, headers={"X-OpenStack-Image-Size": str(len(data))})
    assert response.status_code == 204
    body = member.get(f"/images/{image['id']}").json()
    assert body["checksum"] == hashlib.md5(data).hexdigest()
    assert body["os_hash_value"] == hashlib.sha512(data).hexdigest()
    assert body["size"] == len(data)


def test_an_empty_upload_makes_an_empty_active_image(member):
    image = member.create()
    assert member.put_file(image["id"], b"").status_code == 204
    body = member.get(f"/images/{image['id']}").json()
    assert (body["status"], body["size"], body["checksum"]) == ("active", 0, hashlib.md5(b"").hexdigest())


def test_a_chunked_upload_is_read_to_its_end(member):
    image = member.create()
    stream = BodyStream(300_000)
    assert put_stream(member, image["id"], stream, chunked=True).status_code == 204
    body = member.get(f"/images/{image['id']}").json()
    assert (body["size"], body["checksum"]) == (300_000, stream.md5.hexdigest())


def test_upload_above_the_limit_is_refused_before_reading(member, settings, image_store):
    settings.IMAGE_MAX_BYTES = 1000
    image = member.create()
    stream = BodyStream(5000)
    message = glance_error(put_stream(member, image["id"], stream, content_length=5000), 413)
    assert "too large" in message
    assert stream.offset == 0
    assert Image.objects.get(pk=image["id"]).status == "queued"
    assert files_in(image_store) == []


def test_upload_growing_past_the_limit_midway_leaves_nothing(member, settings, image_store):
    settings.IMAGE_MAX_BYTES = 200_000
    image = member.create()
    stream = BodyStream(1_000_000)
    glance_error(put_stream(member, image["id"], stream, chunked=True), 413)
    assert stream.offset <= 200_000 + storage.CHUNK_SIZE  # it stopped reading
    row = Image.objects.get(pk=image["id"])
    assert (row.status, row.size, row.checksum) == ("queued", None, None)
    assert files_in(image_store) == []
    assert not Event.objects.filter(event_type="image.upload").exists()


def test_exactly_the_limit_is_accepted(member, settings):
    settings.IMAGE_MAX_BYTES = 1000
    image = member.create()
    assert member.put_file(image["id"], b"x" * 1000).status_code == 204


@pytest.mark.parametrize(
    "stream_kwargs, status",
    [
        ({"end_at": 150_000}, 400),  # the body ends before its Content-Length
        ({"fail_at": 150_000}, 400),  # the connection breaks
    ],
)
def test_interrupted_upload_leaves_the_image_queued_and_no_file(member, image_store, stream_kwargs, status):
    image = member.create()
    stream = BodyStream(400_000, **stream_kwargs)
    glance_error(put_stream(member, image["id"], stream, content_length=400_000), status)
    row = Image.objects.get(pk=image["id"])
    assert (row.status, row.size, row.checksum, row.os_hash_value) == ("queued", None, None, None)
    assert files_in(image_store) == []
    # and it can be uploaded again
    assert member.put_file(image["id"], b"again").status_code == 204


def test_a_failure_of_any_kind_puts_the_image_back(member, image_store):
    image = member.create()

    def chunks():
        yield b"a" * 100_000
        raise KeyboardInterrupt  # the worker is being stopped

    with pytest.raises(KeyboardInterrupt):
        services.upload_image_data(Caller.system("tests"), image["id"], chunks())
    assert Image.objects.get(pk=image["id"]).status == "queued"
    assert files_in(image_store) == []


def test_image_deleted_during_upload_answers_410_and_keeps_nothing(
    member, image_store, django_capture_on_commit_callbacks
):
    image = member.create()

    def delete_it(offset):
        services.delete_image(Caller.system("tests"), image["id"])

    with django_capture_on_commit_callbacks(execute=True):
        response = put_stream(member, image["id"], BodyStream(300_000, hook=delete_it), content_length=300_000)
    assert "deleted during the upload" in glance_error(response, 410)
    assert not Image.objects.filter(pk=image["id"]).exists()
    assert files_in(image_store) == []


def test_upload_refusals(member, other, admin, image_store):
    image = member.create()
    assert member.put_file(image["id"], b"data").status_code == 204
    assert "transition from active to saving" in glance_error(member.put_file(image["id"], b"more"), 409)
    bare = member.post("/images", {"name": "no-formats"}).json()
    assert "disk_format, container_format must be set" in glance_error(member.put_file(bare["id"], b"x"), 400)
    queued = member.create()
    glance_error(member.put_file(queued["id"], b"x", content_type="application/json"), 415)
    glance_error(member.put_file(queued["id"], b"x", content_type=""), 415)
    glance_error(other.put_file(queued["id"], b"x"), 404)
    public = admin.create(visibility="public")
    assert "upload_image" in glance_error(other.put_file(public["id"], b"x"), 403)
    assert Image.objects.get(pk=queued["id"]).status == "queued"
    assert files_in(image_store) == [image["id"]]


# --- download --------------------------------------------------------------------


@pytest.fixture
def uploaded(member):
    image = member.create()
    data = bytes(range(256)) * 1000
    assert member.put_file(image["id"], data).status_code == 204
    return image["id"], data


def test_download_streams_the_data_with_content_md5(member, uploaded):
    image_id, data = uploaded
    response = member.get(f"/images/{image_id}/file")
    assert response.status_code == 200 and response.streaming
    assert b"".join(response.streaming_content) == data
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Length"] == str(len(data))
    assert response["Content-MD5"] == hashlib.md5(data).hexdigest()


@pytest.mark.parametrize(
    "header, start, end",
    [
        ("bytes=0-9", 0, 9),
        ("bytes=1000-", 1000, 255_999),
        ("bytes=-16", 256_000 - 16, 255_999),
        ("bytes=255990-999999", 255_990, 255_999),
    ],
)
def test_download_a_range_answers_206(member, uploaded, header, start, end):
    image_id, data = uploaded
    response = member.get(f"/images/{image_id}/file", headers={"Range": header})
    assert response.status_code == 206
    assert b"".join(response.streaming_content) == data[start : end + 1]
    assert response["Content-Range"] == f"bytes {start}-{end}/{len(data)}"
    assert response["Content-Length"] == str(end - start + 1)
    assert "Content-MD5" not in response


@pytest.mark.parametrize("header", ["bytes=256000-", "bytes=999999-1000000", "bytes=-0"])
def test_download_a_range_past_the_end_answers_416(member, uploaded, header):
    image_id, _ = uploaded
    response = member.get(f"/images/{image_id}/file", headers={"Range": header})
    glance_error(response, 416)
    assert response["Content-Range"] == "bytes */256000"


@pytest.mark.parametrize("header", ["bytes=9-2", "items=0-1", "bytes=0-1,5-6", "nonsense"])
def test_download_ignores_a_range_it_cannot_parse(member, uploaded, header):
    image_id, data = uploaded
    response = member.get(f"/images/{image_id}/file", headers={"Range": header})
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == data


def test_download_of_an_image_without_data_is_204(member):
    image = member.create()
    response = member.get(f"/images/{image['id']}/file")
    assert response.status_code == 204 and response.content == b""


def test_download_of_someone_elses_private_image_is_404(other, uploaded):
    glance_error(other.get(f"/images/{uploaded[0]}/file"), 404)


def test_delete_removes_the_data(member, uploaded, image_store, django_capture_on_commit_callbacks):
    image_id, _ = uploaded
    with django_capture_on_commit_callbacks(execute=True):
        assert member.delete(f"/images/{image_id}").status_code == 204
    assert files_in(image_store) == []
