"""End to end: the stock ``openstack`` CLI manages images on a live Corral
(create --file, list, show, set --property, save, delete), as it would on
Glance. Skipped without a CLI, like test_openstack_cli.py (same fixtures)."""

import hashlib

from aggregates.audit.models import Event
from aggregates.images.models import Image
from tests.plugins.openstack_cli import run_json, run_quiet

# Some bytes standing in for cirros: big enough to take several chunks each way.
IMAGE_BYTES = bytes(range(256)) * 4096 + b"tail"


def test_image_walk(openstack, tmp_path, image_store):
    source = tmp_path / "cirros.img"
    source.write_bytes(IMAGE_BYTES)

    created = run_json(openstack, "image", "create", "--file", str(source), "--disk-format", "qcow2", "cirros")
    image = Image.objects.get(name="cirros")
    assert created["id"] == str(image.id)
    assert created["status"] == "active"
    assert (created["disk_format"], created["container_format"]) == ("qcow2", "bare")
    assert created["size"] == len(IMAGE_BYTES)
    assert created["checksum"] == hashlib.md5(IMAGE_BYTES).hexdigest()
    assert image.os_hash_value == hashlib.sha512(IMAGE_BYTES).hexdigest()
    assert (image_store / str(image.id)).read_bytes() == IMAGE_BYTES

    listed = run_json(openstack, "image", "list")
    assert [(i["ID"], i["Name"], i["Status"]) for i in listed] == [(str(image.id), "cirros", "active")]
    long_list = run_json(openstack, "image", "list", "--long")
    assert long_list[0]["Checksum"] == created["checksum"] and long_list[0]["Size"] == len(IMAGE_BYTES)

    shown = run_json(openstack, "image", "show", "cirros")
    assert shown["id"] == str(image.id) and shown["owner"] == openstack.project.id
    assert shown["visibility"] == "shared"
    assert shown["properties"]["os_hash_algo"] == "sha512"
    assert shown["properties"]["owner_specified.openstack.object"] == "images/cirros"
    assert run_json(openstack, "image", "show", str(image.id))["name"] == "cirros"

    run_quiet(openstack, "image", "set", "--property", "hw_disk_bus=scsi", "cirros")
    assert run_json(openstack, "image", "show", "cirros")["properties"]["hw_disk_bus"] == "scsi"
    run_quiet(openstack, "image", "set", "--property", "hw_disk_bus=virtio", "--min-ram", "64", "cirros")
    shown = run_json(openstack, "image", "show", "cirros")
    assert shown["properties"]["hw_disk_bus"] == "virtio" and shown["min_ram"] == 64
    run_quiet(openstack, "image", "unset", "--property", "hw_disk_bus", "cirros")
    assert "hw_disk_bus" not in run_json(openstack, "image", "show", "cirros")["properties"]

    saved = tmp_path / "saved.img"
    run_quiet(openstack, "image", "save", "--file", str(saved), "cirros")
    assert saved.read_bytes() == IMAGE_BYTES

    run_quiet(openstack, "image", "set", "--protected", "cirros")
    returncode, _, stderr = openstack("image", "delete", "cirros")
    assert returncode != 0 and "Failed to delete 1 of 1 images" in stderr
    assert Image.objects.filter(pk=image.id).exists()
    run_quiet(openstack, "image", "set", "--unprotected", "cirros")

    run_quiet(openstack, "image", "delete", "cirros")
    assert run_json(openstack, "image", "list") == []
    assert not Image.objects.exists()
    assert list(image_store.iterdir()) == []
    assert [e.event_type for e in Event.objects.filter(object_type="image").order_by("id")] == [
        "image.create",
        "image.upload",
        *["image.update"] * 5,
        "image.delete",
    ]


def test_image_errors_reach_the_cli(openstack):
    returncode, _, stderr = openstack("image", "show", "nothing-here")
    assert returncode != 0 and "No Image found for nothing-here" in stderr
    run_json(openstack, "image", "create", "--disk-format", "raw", "blank")
    returncode, _, stderr = openstack("image", "set", "--property", "checksum=forged", "blank")
    # PATCH goes with an empty Accept header: Glance (webob) answers plain text,
    # and the SDK shows the reason phrase.
    assert returncode != 0 and "403: Client Error" in stderr and "Forbidden" in stderr, stderr
    assert Image.objects.get(name="blank").checksum == hashlib.md5(b"").hexdigest()


def test_create_from_stdin_with_properties(openstack):
    """Without --file, the CLI uploads its standard input (empty here)."""
    created = run_json(
        openstack, "image", "create", "--disk-format", "raw", "--private", "--property", "os_distro=cirros", "empty"
    )
    assert (created["status"], created["size"], created["visibility"]) == ("active", 0, "private")
    shown = run_json(openstack, "image", "show", "empty")
    assert shown["properties"]["os_distro"] == "cirros"
