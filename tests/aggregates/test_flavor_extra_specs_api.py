"""``/flavors/{id}/os-extra_specs``: flavor extra specs, and their validation from 2.86."""

import pytest

from aggregates.audit.models import Event
from aggregates.errors import Invalid
from aggregates.flavors import services as flavors
from aggregates.flavors.models import Flavor, FlavorExtraSpec


@pytest.fixture
def flavor(db, system):
    return flavors.create_flavor(system, "m1", 512, 1, 1, flavorid="6")


def stored_specs():
    return dict(FlavorExtraSpec.objects.values_list("key", "value"))


def set_specs(api, specs, version=None, flavorid="6"):
    return api.post(f"/flavors/{flavorid}/os-extra_specs", {"extra_specs": specs}, version=version)


# --- permissions -------------------------------------------------------------------


def test_anonymous_callers_get_401(anon_api, flavor):
    assert anon_api.get("/flavors/6/os-extra_specs").status_code == 401
    assert set_specs(anon_api, {"k": "v"}).status_code == 401
    assert anon_api.delete("/flavors/6/os-extra_specs/k").status_code == 401


def test_members_read_extra_specs_of_flavors_they_see(member_api, system, flavor):
    flavors.set_extra_specs(system, "6", {"hw:numa_nodes": "1"})
    assert member_api.get("/flavors/6/os-extra_specs").json() == {"extra_specs": {"hw:numa_nodes": "1"}}
    assert member_api.get("/flavors/6/os-extra_specs/hw:numa_nodes").json() == {"hw:numa_nodes": "1"}
    flavors.create_flavor(system, "secret", 512, 1, 1, flavorid="7", is_public=False)
    assert member_api.get("/flavors/7/os-extra_specs").status_code == 404


@pytest.mark.parametrize("role_api", ["reader_api", "member_api"])
def test_writes_are_admin_only(request, role_api, system, flavor):
    api = request.getfixturevalue(role_api)
    flavors.set_extra_specs(system, "6", {"k": "v"})
    responses = {
        "create": set_specs(api, {"k": "w"}),
        "update": api.put("/flavors/6/os-extra_specs/k", {"k": "w"}),
        "delete": api.delete("/flavors/6/os-extra_specs/k"),
    }
    for policy, response in responses.items():
        assert response.status_code == 403
        assert f"os_compute_api:os-flavor-extra-specs:{policy}" in response.json()["forbidden"]["message"]
    assert stored_specs() == {"k": "v"}


# --- list, create (merge), show --------------------------------------------------------


def test_list_starts_empty(admin_api, flavor):
    response = admin_api.get("/flavors/6/os-extra_specs")
    assert response.status_code == 200
    assert response.json() == {"extra_specs": {}}


def test_create_echoes_the_body_and_stores_strings(admin_api, flavor):
    body = {"extra_specs": {"hw:numa_nodes": 2, "quota:cpu_shares": 1.5, "foo": "bar"}}
    response = admin_api.post("/flavors/6/os-extra_specs", body)
    assert response.status_code == 200
    assert response.json() == body
    assert admin_api.get("/flavors/6/os-extra_specs").json() == {
        "extra_specs": {"hw:numa_nodes": "2", "quota:cpu_shares": "1.5", "foo": "bar"}
    }


def test_create_merges_into_existing_specs(admin_api, flavor):
    set_specs(admin_api, {"a": "1", "b": "2"})
    set_specs(admin_api, {"b": "3", "c": "4"})
    assert stored_specs() == {"a": "1", "b": "3", "c": "4"}


def test_create_with_no_specs_changes_nothing(admin_api, flavor):
    response = set_specs(admin_api, {})
    assert response.status_code == 200
    assert response.json() == {"extra_specs": {}}
    assert stored_specs() == {}


def test_create_records_a_flavor_update_event(admin_api, flavor):
    set_specs(admin_api, {"hw:cpu_policy": "dedicated"})
    event = Event.objects.get(event_type="flavor.update")
    assert (event.object_type, event.object_id) == ("flavor", "6")
    assert event.payload["extra_specs"] == {"hw:cpu_policy": "dedicated"}


def test_create_unknown_flavor(admin_api, db):
    response = set_specs(admin_api, {"k": "v"})
    assert response.status_code == 404
    assert response.json()["itemNotFound"]["message"] == "Flavor 6 could not be found."


def test_show_one_key(admin_api, flavor):
    set_specs(admin_api, {"hw:cpu_policy": "dedicated", "other": "x"})
    response = admin_api.get("/flavors/6/os-extra_specs/hw:cpu_policy")
    assert response.status_code == 200
    assert response.json() == {"hw:cpu_policy": "dedicated"}


def test_show_key_with_spaces(admin_api, flavor):
    set_specs(admin_api, {"my key": "v"})
    assert admin_api.get("/flavors/6/os-extra_specs/my%20key").json() == {"my key": "v"}


def test_show_unknown_key_and_flavor(admin_api, flavor):
    response = admin_api.get("/flavors/6/os-extra_specs/nope")
    assert response.status_code == 404
    assert response.json()["itemNotFound"]["message"] == "Flavor 6 has no extra specs with key nope."
    assert admin_api.get("/flavors/99/os-extra_specs/nope").status_code == 404
    assert admin_api.get("/flavors/99/os-extra_specs").status_code == 404


def test_reads_strict_query_from_2_102(admin_api, flavor):
    set_specs(admin_api, {"k": "v"})
    for path in ("/flavors/6/os-extra_specs?x=1", "/flavors/6/os-extra_specs/k?x=1"):
        assert admin_api.get(path, version="2.101").status_code == 200
        assert admin_api.get(path, version="2.102").status_code == 400


BAD_CREATE_BODIES = [
    pytest.param({}, "'extra_specs' is a required property", id="no-extra-specs"),
    pytest.param({"extra_specs": {"k": "v"}, "more": 1}, "Additional properties", id="extra-top-key"),
    pytest.param({"extra_specs": ["k"]}, "is not of type 'object'", id="specs-list"),
    pytest.param({"extra_specs": {"a/b": "v"}}, "does not match any of the regexes", id="key-with-slash"),
    pytest.param({"extra_specs": {"": "v"}}, "does not match any of the regexes", id="key-empty"),
    pytest.param({"extra_specs": {"k" * 256: "v"}}, "does not match any of the regexes", id="key-too-long"),
    pytest.param({"extra_specs": {"k\n": "v"}}, "extra spec key", id="key-newline"),
    pytest.param({"extra_specs": {"k": "v" * 256}}, "is too long", id="value-too-long"),
    pytest.param({"extra_specs": {"k": None}}, "is not of type 'string', 'number'", id="value-null"),
    pytest.param({"extra_specs": {"k": True}}, "is not of type 'string', 'number'", id="value-bool"),
    pytest.param({"extra_specs": {"k": {"a": 1}}}, "is not of type 'string', 'number'", id="value-object"),
    pytest.param(
        {"extra_specs": {"k": int("9" * 256)}}, "extra_specs value has more than 255 characters", id="number-too-long"
    ),
]


@pytest.mark.parametrize("version", ["2.1", "2.86"])
@pytest.mark.parametrize("body, message", BAD_CREATE_BODIES)
def test_create_rejects_bad_input(admin_api, flavor, body, message, version):
    set_specs(admin_api, {"kept": "yes"})
    response = admin_api.post("/flavors/6/os-extra_specs", body, version=version)
    assert response.status_code == 400, response.content
    assert message in response.json()["badRequest"]["message"]
    assert stored_specs() == {"kept": "yes"}


def test_create_rejects_malformed_json(admin_api, flavor):
    response = admin_api.post("/flavors/6/os-extra_specs", raw='{"extra_specs": ')
    assert response.status_code == 400
    assert stored_specs() == {}


# --- update and delete of one key ---------------------------------------------------------


def test_update_one_key(admin_api, flavor):
    set_specs(admin_api, {"hw:cpu_policy": "shared", "other": "x"})
    response = admin_api.put("/flavors/6/os-extra_specs/hw:cpu_policy", {"hw:cpu_policy": "dedicated"})
    assert response.status_code == 200
    assert response.json() == {"hw:cpu_policy": "dedicated"}
    assert stored_specs() == {"hw:cpu_policy": "dedicated", "other": "x"}


def test_update_creates_a_missing_key_and_echoes_numbers(admin_api, flavor):
    response = admin_api.put("/flavors/6/os-extra_specs/hw:numa_nodes", {"hw:numa_nodes": 2})
    assert response.json() == {"hw:numa_nodes": 2}
    assert stored_specs() == {"hw:numa_nodes": "2"}


@pytest.mark.parametrize(
    "body, message",
    [
        ({"other": "x"}, "Request body and URI mismatch"),
        ({"k": "v", "other": "x"}, "has too many properties"),
        ({}, "should be non-empty"),
        ({"k": None}, "is not of type"),
        ({"k": "v" * 256}, "is too long"),
        (["k"], "is not of type 'object'"),
    ],
)
def test_update_rejects_bad_bodies(admin_api, flavor, body, message):
    set_specs(admin_api, {"k": "kept"})
    response = admin_api.put("/flavors/6/os-extra_specs/k", body)
    assert response.status_code == 400
    assert message in response.json()["badRequest"]["message"]
    assert stored_specs() == {"k": "kept"}


def test_update_unknown_flavor(admin_api, db):
    assert admin_api.put("/flavors/99/os-extra_specs/k", {"k": "v"}).status_code == 404


def test_delete_one_key(admin_api, flavor):
    set_specs(admin_api, {"a": "1", "b": "2"})
    response = admin_api.delete("/flavors/6/os-extra_specs/a")
    assert response.status_code == 200
    assert response.content == b""
    assert stored_specs() == {"b": "2"}
    assert Event.objects.filter(event_type="flavor.update").latest("id").payload["extra_specs"] == {"b": "2"}


def test_delete_unknown_key_and_flavor(admin_api, flavor):
    response = admin_api.delete("/flavors/6/os-extra_specs/nope")
    assert response.status_code == 404
    assert response.json()["itemNotFound"]["message"] == "Flavor 6 has no extra specs with key nope."
    assert admin_api.delete("/flavors/99/os-extra_specs/nope").status_code == 404
    assert not Event.objects.filter(event_type="flavor.update").exists()


# --- validation of known specs (2.86+) -------------------------------------------------------

VALID_SPECS = [
    ("hw:cpu_policy", "dedicated"),
    ("hw:cpu_policy", "mixed"),
    ("hw:cpu_thread_policy", "isolate"),
    ("hw:emulator_threads_policy", "share"),
    ("hw:cpu_dedicated_mask", "^0,2-3"),
    ("hw:cpu_realtime", "yes"),
    ("hw:cpu_realtime_mask", "^0-1"),
    ("hw:mem_page_size", "large"),
    ("hw:mem_page_size", "2048"),
    ("hw:mem_page_size", "1GB"),
    ("hw:mem_page_size", "2kbit"),
    ("hw:numa_nodes", "2"),
    ("hw:numa_cpus.0", "0-3,^2"),
    ("hw:numa_mem.1", "2048"),
    ("hw:pci_numa_affinity_policy", "socket"),
    ("hw:watchdog_action", "poweroff"),
    ("hw:pmu", "False"),
    ("hw:vif_multiqueue_enabled", "true"),
    ("hw:boot_menu", "1"),
    ("hw:cpu_sockets", "2"),
    ("hw:cpu_cores", "4"),
    ("hw:cpu_threads", "2"),
    ("hw:max_cpu_sockets", "1"),
    ("hw:max_cpu_cores", "8"),
    ("hw:max_cpu_threads", "1"),
    ("hw:serial_port_count", "0"),
    ("hw:tpm_version", "2.0"),
    ("hw:tpm_model", "tpm-crb"),
    ("hw:hide_hypervisor_id", "on"),
    ("hw:mem_encryption", "t"),
    ("hw:locked_memory", "n"),
    ("hw:viommu_model", "virtio"),
    ("hw:maxphysaddr_mode", "emulate"),
    ("hw:maxphysaddr_bits", "42"),
    ("hw:pmem", "label1,label2"),
    ("hw_rng:allowed", "True"),
    ("hw_rng:rate_bytes", "1024"),
    ("hw_rng:rate_period", "0"),
    ("hw_video:ram_max_mb", "64"),
    ("os:secure_boot", "required"),
    ("quota:cpu_shares", "2048"),
    ("quota:cpu_period", "20000"),
    ("quota:disk_read_iops_sec", "100"),
    ("quota:vif_outbound_burst", "10"),
    ("quota:memory_shares_level", "custom"),
    ("quota:cpu_limit", "-1"),
    ("accel:device_profile", "gpu-profile"),
    ("pci_passthrough:alias", "a1:2, b2:1"),
    ("vmware:hw_version", "vmx-13"),
    ("capabilities:hypervisor_type", "s== QEMU"),
    ("capabilities:cpu_info:features", "<in> aes"),
    ("aggregate_instance_extra_specs:ssd", "<or> true <or> yes"),
    ("aggregate_instance_extra_specs:any key at all", "anything"),
    ("resources:VCPU", "2"),
    ("resources1:PCPU", "4"),
    ("resources_gpu:CUSTOM_GPU", "1"),
    ("trait:HW_CPU_X86_AVX2", "required"),
    ("trait2:CUSTOM_FAST", "forbidden"),
    ("group_policy", "isolate"),
    ("hide_hypervisor_id", "no"),
    # keys outside Nova's namespaces are not checked
    ("foo", "bar"),
    ("foo:bar", "baz"),
    ("hww:cpu_policy", "x"),
    ("hw_cpu_policy", "x"),
]

INVALID_SPECS = [
    ("hw:cpu_policy", "Dedicated", "'Dedicated' is not one of: dedicated, shared, mixed."),
    ("hw:cpu_thread_policy", "preferred", "is not one of"),
    ("hw:mem_page_size", "huge", "'huge' is not of the format"),
    ("hw:cpu_realtime_mask", "0-x", "is not of the format"),
    ("hw:numa_nodes", "0", "'0' is less than the min value of '1'."),
    ("hw:numa_nodes", "two", "'two' is not a valid integer value."),
    ("hw:numa_cpus.0", "a-b", "is not of the format"),
    ("hw:numa_mem.0", "0", "less than the min value"),
    ("hw:cpu_realtime", "2", "'2' is not a valid boolean-like value."),
    ("hw:pmu", "enabled", "boolean-like"),
    ("hw:watchdog_action", "explode", "is not one of"),
    ("hw:serial_port_count", "-1", "less than the min value"),
    ("hw:redirected_usb_ports", "16", "'16' is greater than the max value of '15'."),
    ("hw:tpm_version", "3.0", "is not one of"),
    ("hw_rng:allowed", "maybe", "boolean-like"),
    ("hw_video:ram_max_mb", "-1", "less than the min value"),
    ("os:secure_boot", "optional", "is not one of"),
    ("quota:cpu_shares", "-5", "less than the min value"),
    ("pci_passthrough:alias", "gpu", "is not of the format"),
    ("resources:VCPU", "two", "is not a valid integer value"),
    ("trait:HW_CPU_X86_AVX2", "yes", "is not one of: required, forbidden."),
    ("group_policy", "all", "is not one of"),
    ("hw:cpu_polcy", "dedicated", "extra spec 'hw:cpu_polcy' does not appear to be a valid extra spec."),
    ("hw:numa_cpus.x", "0", "does not appear to be a valid extra spec"),
    ("hw_rng:foo", "1", "does not appear to be a valid extra spec"),
    ("hw_video:foo", "1", "does not appear to be a valid extra spec"),
    ("os:foo", "1", "does not appear to be a valid extra spec"),
    ("accel:foo", "1", "does not appear to be a valid extra spec"),
    ("capabilities:foo", "1", "does not appear to be a valid extra spec"),
    ("pci_passthrough:foo", "1", "does not appear to be a valid extra spec"),
    ("quota:foo", "1", "does not appear to be a valid extra spec"),
    ("vmware:foo", "1", "does not appear to be a valid extra spec"),
    ("resources:NOT_A_CLASS", "1", "does not appear to be a valid extra spec"),
    ("resources_x:custom_lower", "1", "does not appear to be a valid extra spec"),
    ("trait:NOT_A_TRAIT", "required", "does not appear to be a valid extra spec"),
    ("trait1:custom_lower", "required", "does not appear to be a valid extra spec"),
]


@pytest.mark.parametrize("key, value", VALID_SPECS)
def test_known_and_unchecked_specs_pass_at_2_86(admin_api, flavor, key, value):
    response = set_specs(admin_api, {key: value}, version="2.86")
    assert response.status_code == 200, response.content
    assert stored_specs() == {key: value}


@pytest.mark.parametrize("key, value, message", INVALID_SPECS)
def test_invalid_specs_are_refused_at_2_86(admin_api, flavor, key, value, message):
    response = set_specs(admin_api, {"hw:numa_nodes": "1", key: value}, version="2.86")
    assert response.status_code == 400
    text = response.json()["badRequest"]["message"]
    assert text.startswith("Validation failed; ")
    assert message in text
    assert stored_specs() == {}
    put = admin_api.put(f"/flavors/6/os-extra_specs/{key}", {key: value}, version="2.86")
    assert put.status_code == 400
    assert stored_specs() == {}


@pytest.mark.parametrize("key, value, message", INVALID_SPECS[:3] + INVALID_SPECS[-3:])
def test_invalid_specs_are_accepted_before_2_86(admin_api, flavor, key, value, message):
    assert set_specs(admin_api, {key: value}, version="2.85").status_code == 200
    assert admin_api.put(f"/flavors/6/os-extra_specs/{key}", {key: value}).status_code == 200
    assert stored_specs() == {key: value}


def test_numbers_are_validated_as_their_text(admin_api, flavor):
    assert set_specs(admin_api, {"hw:numa_nodes": 2}, version="2.86").status_code == 200
    response = set_specs(admin_api, {"hw:numa_nodes": 1.5}, version="2.86")
    assert response.status_code == 400
    assert "'1.5' is not a valid integer value." in response.json()["badRequest"]["message"]


def test_validation_happens_before_the_flavor_lookup(admin_api, db):
    response = set_specs(admin_api, {"hw:numa_nodes": "x"}, version="2.86", flavorid="nope")
    assert response.status_code == 400
    assert set_specs(admin_api, {"hw:numa_nodes": "1"}, version="2.86", flavorid="nope").status_code == 404


def test_validate_extra_specs_is_the_rule_the_console_reuses():
    flavors.validate_extra_specs({"hw:cpu_policy": "dedicated", "hw:numa_nodes": 2, "custom": "x"})
    with pytest.raises(Invalid, match="hw:foo"):
        flavors.validate_extra_specs({"hw:foo": "bar"})
    with pytest.raises(Invalid, match="more than 255 characters"):
        flavors.validate_extra_specs({"custom": 10**300})


def test_extra_specs_show_in_flavor_bodies_after_a_set(admin_api, flavor):
    set_specs(admin_api, {"hw:cpu_policy": "dedicated"}, version="2.86")
    assert admin_api.get("/flavors/6", version="2.61").json()["flavor"]["extra_specs"] == {"hw:cpu_policy": "dedicated"}
    assert Flavor.objects.get().extra_spec_items.count() == 1
