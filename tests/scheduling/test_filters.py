"""Nova's host filters: each one's pass and reject, and the reason it gives."""

import logging

import pytest
from django.core.exceptions import ImproperlyConfigured

from aggregates.scheduling import filters
from aggregates.scheduling.host_state import AggregateInfo, HostState
from aggregates.scheduling.request import FlavorSpec, ImageSpec, RequestSpec


def agg(name: str, **metadata: str) -> AggregateInfo:
    return AggregateInfo(uuid=f"uuid-{name}", name=name, metadata=metadata)


def agg_md(name: str, metadata: dict[str, str]) -> AggregateInfo:
    """An aggregate whose keys are not Python names (scoped, dotted)."""
    return AggregateInfo(uuid=f"uuid-{name}", name=name, metadata=metadata)


def host(*aggregates: AggregateInfo, name: str = "node7", **fields) -> HostState:
    return HostState(host=name, node=name, node_uuid=f"uuid-{name}", aggregates=list(aggregates), **fields)


def spec(
    extra_specs: dict[str, str] | None = None,
    flavor: str = "ssd.large",
    project: str = "proj-a",
    image: dict[str, str] | None = None,
    **fields,
) -> RequestSpec:
    image_spec = ImageSpec(id="img-1", name="cirros", properties=image) if image is not None else None
    flavor_spec = FlavorSpec(
        name=flavor, flavorid="f1", vcpus=1, memory_mb=512, root_gb=1, extra_specs=extra_specs or {}
    )
    return RequestSpec(flavor=flavor_spec, project_id=project, image=image_spec, **fields)


# --- ComputeFilter -------------------------------------------------------------


def test_compute_filter_passes_enabled_and_up_host():
    assert filters.ComputeFilter().host_passes(host(), spec()) is None


def test_compute_filter_rejects_disabled_host_with_its_reason():
    reason = filters.ComputeFilter().host_passes(host(service_disabled=True, disabled_reason="maintenance"), spec())
    assert reason is not None
    assert "node7" in reason and "disabled" in reason and "maintenance" in reason


def test_compute_filter_rejects_disabled_host_without_reason():
    reason = filters.ComputeFilter().host_passes(host(service_disabled=True), spec())
    assert reason is not None and "disabled" in reason and "no reason given" in reason


def test_compute_filter_rejects_down_host():
    reason = filters.ComputeFilter().host_passes(host(service_up=False), spec())
    assert reason is not None and "node7" in reason and "down" in reason


# --- AggregateInstanceExtraSpecsFilter -------------------------------------------

extra_specs_filter = filters.AggregateInstanceExtraSpecsFilter()


def test_extra_specs_flavor_without_extra_specs_passes_any_host():
    assert extra_specs_filter.host_passes(host(), spec()) is None


@pytest.mark.parametrize("key", ["aggregate_instance_extra_specs:ssd", "ssd"])
def test_extra_specs_scoped_and_unscoped_keys_match(key):
    assert extra_specs_filter.host_passes(host(agg("fast-io", ssd="true")), spec({key: "true"})) is None


@pytest.mark.parametrize("key", ["aggregate_instance_extra_specs:ssd", "ssd"])
def test_extra_specs_scoped_and_unscoped_keys_reject(key):
    assert extra_specs_filter.host_passes(host(agg("fast-io", ssd="false")), spec({key: "true"})) is not None


@pytest.mark.parametrize("key", ["hw:cpu_policy", "resources:VCPU", "capabilities:ssd", "trait:CUSTOM_X"])
def test_extra_specs_other_scopes_are_ignored(key):
    assert extra_specs_filter.host_passes(host(), spec({key: "dedicated"})) is None


def test_extra_specs_scoped_key_is_looked_up_without_its_scope():
    # The aggregate key is "ssd"; an aggregate key spelled with the scope does not count.
    md_host = host(agg_md("odd", {"aggregate_instance_extra_specs:ssd": "true"}))
    assert extra_specs_filter.host_passes(md_host, spec({"aggregate_instance_extra_specs:ssd": "true"})) is not None


def test_extra_specs_missing_key_reason():
    reason = extra_specs_filter.host_passes(
        host(agg("fast-io", rack="r1")), spec({"aggregate_instance_extra_specs:ssd": "true"})
    )
    assert reason == (
        "flavor ssd.large requires ssd=true (aggregate_instance_extra_specs:ssd); "
        "host node7 is in no aggregate with key ssd"
    )


def test_extra_specs_mismatch_reason_names_aggregates_and_values():
    reason = extra_specs_filter.host_passes(
        host(agg("fast-io", ssd="false")), spec({"aggregate_instance_extra_specs:ssd": "true"})
    )
    assert reason == (
        "flavor ssd.large requires ssd=true (aggregate_instance_extra_specs:ssd); "
        "host node7's aggregates fast-io give ssd=false"
    )


def test_extra_specs_reason_shows_operator_requirements():
    reason = extra_specs_filter.host_passes(host(agg("small", cores="2")), spec({"cores": ">= 4"}))
    assert reason is not None and "requires cores >= 4 (cores)" in reason and "small give cores=2" in reason


def test_extra_specs_any_value_of_any_aggregate_may_match():
    two = host(agg("a", ssd="false"), agg("b", ssd="no, true"))
    assert extra_specs_filter.host_passes(two, spec({"ssd": "true"})) is None


def test_extra_specs_every_spec_must_match():
    h = host(agg("a", ssd="true", gpu="no"))
    assert extra_specs_filter.host_passes(h, spec({"ssd": "true"})) is None
    reason = extra_specs_filter.host_passes(h, spec({"ssd": "true", "gpu": "yes"}))
    assert reason is not None and "gpu=yes" in reason


def test_extra_specs_operators_apply_to_aggregate_values():
    h = host(agg("big", cores="16"))
    assert extra_specs_filter.host_passes(h, spec({"cores": ">= 8"})) is None
    assert extra_specs_filter.host_passes(h, spec({"cores": ">= 32"})) is not None


def test_extra_specs_non_numeric_value_is_a_rejection_quoting_it():
    reason = extra_specs_filter.host_passes(host(agg("big", cores="lots")), spec({"cores": ">= 8"}))
    assert reason is not None and "'lots'" in reason and "not a number" in reason and "big" in reason


def test_extra_specs_non_numeric_requirement_is_a_rejection_quoting_it():
    reason = extra_specs_filter.host_passes(host(agg("big", cores="4")), spec({"cores": ">= many"}))
    assert reason is not None and "'many'" in reason


def test_extra_specs_uncomparable_value_does_not_hide_a_matching_one():
    assert extra_specs_filter.host_passes(host(agg("a", cores="lots,16")), spec({"cores": ">= 8"})) is None


# --- AggregateMultiTenancyIsolation ----------------------------------------------

tenancy_filter = filters.AggregateMultiTenancyIsolation()


def test_tenancy_host_outside_isolated_aggregates_takes_everyone():
    assert tenancy_filter.host_passes(host(agg("plain", ssd="true")), spec(project="anyone")) is None
    assert tenancy_filter.host_passes(host(), spec(project="anyone")) is None


@pytest.mark.parametrize("key", ["filter_tenant_id", "filter_tenant_id2", "filter_tenant_id:x"])
def test_tenancy_keys_starting_with_filter_tenant_id(key):
    h = host(agg_md("iso", {key: "proj-a, proj-b"}))
    assert tenancy_filter.host_passes(h, spec(project="proj-b")) is None
    assert tenancy_filter.host_passes(h, spec(project="proj-c")) is not None


def test_tenancy_union_over_aggregates():
    h = host(agg("iso-a", filter_tenant_id="proj-a"), agg_md("iso-b", {"filter_tenant_id2": "proj-b"}))
    assert tenancy_filter.host_passes(h, spec(project="proj-b")) is None


def test_tenancy_reason():
    h = host(agg("iso-a", filter_tenant_id="proj-a,proj-b"), agg("plain", ssd="true"))
    reason = tenancy_filter.host_passes(h, spec(project="proj-c"))
    assert reason is not None
    assert "proj-c" in reason and "node7" in reason and "iso-a" in reason and "proj-a, proj-b" in reason
    assert "plain" not in reason


def test_tenancy_key_not_at_start_is_ignored():
    assert tenancy_filter.host_passes(host(agg_md("x", {"my_filter_tenant_id": "proj-a"})), spec(project="z")) is None


# --- AggregateImagePropertiesIsolation -------------------------------------------

isolation_filter = filters.AggregateImagePropertiesIsolation()


def test_isolation_image_value_must_be_in_host_values():
    h = host(agg("linux", os_distro="centos, rhel"))
    assert isolation_filter.host_passes(h, spec(image={"os_distro": "rhel"})) is None
    reason = isolation_filter.host_passes(h, spec(image={"os_distro": "ubuntu"}))
    assert reason is not None
    assert "cirros" in reason and "os_distro=ubuntu" in reason and "linux" in reason and "centos, rhel" in reason


def test_isolation_image_without_the_property_passes():
    assert isolation_filter.host_passes(host(agg("linux", os_distro="centos")), spec(image={})) is None


def test_isolation_request_without_image_passes():
    assert isolation_filter.host_passes(host(agg("linux", os_distro="centos")), spec()) is None


def test_isolation_non_standard_property_is_ignored():
    h = host(agg("tier", customer_tier="gold"))
    assert isolation_filter.host_passes(h, spec(image={"customer_tier": "silver"})) is None


def test_isolation_legacy_property_name_counts_as_the_standard_one():
    h = host(agg("arm", hw_architecture="aarch64"))
    assert isolation_filter.host_passes(h, spec(image={"architecture": "x86_64"})) is not None
    # An aggregate key spelled with the legacy name is not a standard property.
    legacy = host(agg("arm", architecture="aarch64"))
    assert isolation_filter.host_passes(legacy, spec(image={"architecture": "x86_64"})) is None


def test_isolation_compares_canonical_architecture():
    h = host(agg("x86", hw_architecture="x86_64"))
    assert isolation_filter.host_passes(h, spec(image={"hw_architecture": "AMD64"})) is None


def test_isolation_namespace_restricts_the_keys(settings, caplog):
    settings.AGGREGATE_IMAGE_PROPERTIES_ISOLATION_NAMESPACE = "hw"
    settings.AGGREGATE_IMAGE_PROPERTIES_ISOLATION_SEPARATOR = "_"
    h = host(agg("iso", hw_machine_type="q35", os_distro="centos"))
    with caplog.at_level(logging.WARNING, logger="aggregates.scheduling"):
        # os_distro is outside the namespace hw_, so it no longer isolates.
        assert isolation_filter.host_passes(h, spec(image={"os_distro": "ubuntu"})) is None
        reason = isolation_filter.host_passes(h, spec(image={"hw_machine_type": "pc"}))
    assert reason is not None and "hw_machine_type=pc" in reason
    assert "deprecated" in caplog.text


def test_isolation_namespace_with_default_separator(settings):
    settings.AGGREGATE_IMAGE_PROPERTIES_ISOLATION_NAMESPACE = "iso"
    settings.AGGREGATE_IMAGE_PROPERTIES_ISOLATION_SEPARATOR = "."
    h = host(agg_md("iso", {"iso.os_distro": "centos", "os_distro": "centos"}))
    # "os_distro" is outside the namespace; "iso.os_distro" is not a standard property.
    assert isolation_filter.host_passes(h, spec(image={"os_distro": "ubuntu"})) is None


def test_isolation_without_namespace_logs_no_warning(settings, caplog):
    settings.AGGREGATE_IMAGE_PROPERTIES_ISOLATION_NAMESPACE = ""
    with caplog.at_level(logging.WARNING, logger="aggregates.scheduling"):
        isolation_filter.host_passes(host(agg("linux", os_distro="centos")), spec(image={"os_distro": "centos"}))
    assert "deprecated" not in caplog.text


def test_isolation_runs_on_rebuild():
    assert filters.AggregateImagePropertiesIsolation.run_on_rebuild is True
    assert filters.AggregateInstanceExtraSpecsFilter.run_on_rebuild is False


def test_standard_image_properties_constant():
    assert {"hw_architecture", "img_hv_type", "hw_vm_mode", "os_distro", "os_type", "os_secure_boot"} <= (
        filters.STANDARD_IMAGE_PROPERTIES
    )
    assert "hw_machine_type" in filters.STANDARD_IMAGE_PROPERTIES
    assert "architecture" not in filters.STANDARD_IMAGE_PROPERTIES


# --- AggregateIoOpsFilter / AggregateNumInstancesFilter / legacy ----------------


def test_aggregate_io_ops_uses_setting_without_metadata(settings):
    settings.MAX_IO_OPS_PER_HOST = 8
    f = filters.AggregateIoOpsFilter()
    assert f.host_passes(host(num_io_ops=7), spec()) is None
    reason = f.host_passes(host(num_io_ops=8), spec())
    assert reason is not None and "node7" in reason and "8" in reason and "MAX_IO_OPS_PER_HOST" in reason


def test_aggregate_io_ops_uses_minimum_of_aggregates(settings):
    settings.MAX_IO_OPS_PER_HOST = 8
    f = filters.AggregateIoOpsFilter()
    h = host(agg("a", max_io_ops_per_host="5"), agg("b", max_io_ops_per_host="3"), num_io_ops=3)
    reason = f.host_passes(h, spec())
    assert reason is not None and "limit of 3" in reason and "max_io_ops_per_host" in reason and "a, b" in reason
    h.num_io_ops = 2
    assert f.host_passes(h, spec()) is None


def test_aggregate_io_ops_above_setting_from_aggregate(settings):
    settings.MAX_IO_OPS_PER_HOST = 1
    assert (
        filters.AggregateIoOpsFilter().host_passes(host(agg("a", max_io_ops_per_host="20"), num_io_ops=10), spec())
        is None
    )


def test_aggregate_io_ops_invalid_metadata_falls_back_to_setting(settings, caplog):
    settings.MAX_IO_OPS_PER_HOST = 4
    h = host(agg("a", max_io_ops_per_host="lots"), num_io_ops=4)
    with caplog.at_level(logging.WARNING, logger="aggregates.scheduling"):
        assert filters.AggregateIoOpsFilter().host_passes(h, spec()) is not None
    assert "max_io_ops_per_host" in caplog.text
    h.num_io_ops = 3
    assert filters.AggregateIoOpsFilter().host_passes(h, spec()) is None


def test_legacy_io_ops_filter_ignores_aggregates(settings):
    settings.MAX_IO_OPS_PER_HOST = 8
    h = host(agg("a", max_io_ops_per_host="2"), num_io_ops=5)
    assert filters.IoOpsFilter().host_passes(h, spec()) is None
    h.num_io_ops = 8
    assert "MAX_IO_OPS_PER_HOST" in (filters.IoOpsFilter().host_passes(h, spec()) or "")


def test_aggregate_num_instances(settings):
    settings.MAX_INSTANCES_PER_HOST = 50
    f = filters.AggregateNumInstancesFilter()
    assert f.host_passes(host(num_instances=49), spec()) is None
    assert f.host_passes(host(num_instances=50), spec()) is not None
    h = host(agg("small", max_instances_per_host="2"), num_instances=2)
    reason = f.host_passes(h, spec())
    assert reason is not None and "2 servers" in reason and "max_instances_per_host" in reason and "small" in reason
    h.num_instances = 1
    assert f.host_passes(h, spec()) is None


def test_legacy_num_instances_filter_ignores_aggregates(settings):
    settings.MAX_INSTANCES_PER_HOST = 3
    h = host(agg("small", max_instances_per_host="1"), num_instances=2)
    assert filters.NumInstancesFilter().host_passes(h, spec()) is None
    h.num_instances = 3
    assert "MAX_INSTANCES_PER_HOST" in (filters.NumInstancesFilter().host_passes(h, spec()) or "")


# --- AggregateTypeAffinityFilter -------------------------------------------------

type_filter = filters.AggregateTypeAffinityFilter()


def test_type_affinity_no_aggregate_with_key_passes():
    assert type_filter.host_passes(host(agg("plain", ssd="true")), spec(flavor="m1.small")) is None


def test_type_affinity_flavor_listed_passes():
    h = host(agg("gpu", instance_type="gpu.large, gpu.xl"))
    assert type_filter.host_passes(h, spec(flavor="gpu.xl")) is None


def test_type_affinity_listed_by_one_aggregate_is_enough():
    h = host(agg("gpu", instance_type="gpu.large"), agg("general", instance_type="m1.small"))
    assert type_filter.host_passes(h, spec(flavor="m1.small")) is None


def test_type_affinity_unlisted_flavor_rejected():
    h = host(agg("gpu", instance_type="gpu.large,gpu.xl"), agg("rack", ssd="true"))
    reason = type_filter.host_passes(h, spec(flavor="m1.small"))
    assert reason is not None
    assert "m1.small" in reason and "gpu" in reason and "instance_type" in reason and "gpu.large, gpu.xl" in reason


# --- ImagePropertiesFilter -------------------------------------------------------

image_filter = filters.ImagePropertiesFilter()


def test_image_properties_no_image_or_no_properties_passes():
    assert image_filter.host_passes(host(), spec()) is None
    assert image_filter.host_passes(host(), spec(image={"os_distro": "ubuntu"})) is None


@pytest.mark.parametrize(
    "props",
    [
        {"hw_architecture": "x86_64"},
        {"hw_architecture": "AMD64"},
        {"architecture": "x86_64"},
        {"img_hv_type": "kvm"},
        {"img_hv_type": "qemu"},
        {"hypervisor_type": "QEMU"},
        {"hw_vm_mode": "hvm"},
        {"hw_vm_mode": "HV"},
    ],
)
def test_image_properties_qemu_x86_host_supports(props):
    assert image_filter.host_passes(host(hypervisor_type="QEMU", cpu_arch="x86_64"), spec(image=props)) is None


def test_image_properties_wrong_architecture_rejected():
    reason = image_filter.host_passes(host(cpu_arch="x86_64"), spec(image={"hw_architecture": "aarch64"}))
    assert reason is not None and "cirros" in reason and "hw_architecture=aarch64" in reason and "x86_64" in reason


def test_image_properties_wrong_hv_type_rejected():
    reason = image_filter.host_passes(host(hypervisor_type="QEMU"), spec(image={"img_hv_type": "xen"}))
    assert reason is not None and "img_hv_type=xen" in reason and "kvm, qemu" in reason


def test_image_properties_ironic_host():
    ironic = host(hypervisor_type="ironic")
    assert image_filter.host_passes(ironic, spec(image={"img_hv_type": "baremetal"})) is None
    assert image_filter.host_passes(ironic, spec(image={"img_hv_type": "kvm"})) is not None


def test_image_properties_wrong_vm_mode_rejected():
    reason = image_filter.host_passes(host(), spec(image={"hw_vm_mode": "pv"}))
    assert reason is not None and "hw_vm_mode=xen" in reason and "hvm" in reason


def test_image_properties_requested_hypervisor_version():
    h = host(hypervisor_version=6_002_000)
    assert image_filter.host_passes(h, spec(image={"img_hv_requested_version": ">= 6.0"})) is None
    assert image_filter.host_passes(h, spec(image={"img_hv_requested_version": ">=6.2.0,<7"})) is None
    reason = image_filter.host_passes(h, spec(image={"img_hv_requested_version": ">= 7.1"}))
    assert reason is not None and "'>= 7.1'" in reason and "QEMU 6.2.0" in reason
    bad = image_filter.host_passes(h, spec(image={"img_hv_requested_version": "newest"}))
    assert bad is not None and "'newest'" in bad
    # Without a known hypervisor version, the request is not checked.
    assert image_filter.host_passes(host(), spec(image={"img_hv_requested_version": ">= 99"})) is None


# --- SameHostFilter / DifferentHostFilter ---------------------------------------


def test_same_host_empty_hint_passes():
    assert filters.SameHostFilter().host_passes(host(), spec()) is None


def test_same_host():
    hint = spec(same_host=frozenset({"node7", "node8"}))
    assert filters.SameHostFilter().host_passes(host(name="node8"), hint) is None
    reason = filters.SameHostFilter().host_passes(host(name="node9"), hint)
    assert reason is not None and "node9" in reason and "same_host" in reason and "node7, node8" in reason


def test_different_host():
    hint = spec(different_host=frozenset({"node7"}))
    assert filters.DifferentHostFilter().host_passes(host(name="node8"), hint) is None
    assert filters.DifferentHostFilter().host_passes(host(name="node8"), spec()) is None
    reason = filters.DifferentHostFilter().host_passes(host(name="node7"), hint)
    assert reason is not None and "node7" in reason and "different_host" in reason


# --- Registry --------------------------------------------------------------------


def test_registry_has_novas_names():
    assert set(filters.FILTERS) == {
        "ComputeFilter",
        "AggregateInstanceExtraSpecsFilter",
        "AggregateMultiTenancyIsolation",
        "AggregateImagePropertiesIsolation",
        "AggregateIoOpsFilter",
        "AggregateNumInstancesFilter",
        "AggregateTypeAffinityFilter",
        "ImagePropertiesFilter",
        "SameHostFilter",
        "DifferentHostFilter",
        "ServerGroupAntiAffinityFilter",
        "ServerGroupAffinityFilter",
        "IoOpsFilter",
        "NumInstancesFilter",
    }
    assert all(cls.name == name for name, cls in filters.FILTERS.items())


def test_enabled_filters_in_order():
    built = filters.enabled_filters(["ImagePropertiesFilter", "ComputeFilter"])
    assert [type(f) for f in built] == [filters.ImagePropertiesFilter, filters.ComputeFilter]


def test_enabled_filters_unknown_name():
    with pytest.raises(ImproperlyConfigured) as raised:
        filters.enabled_filters(["ComputeFilter", "AvailabilityZoneFilter"])
    message = str(raised.value)
    assert "AvailabilityZoneFilter" in message and "ComputeFilter" in message and "SameHostFilter" in message


def test_default_enabled_filters_are_known(settings):
    assert len(filters.enabled_filters(settings.ENABLED_FILTERS)) == len(settings.ENABLED_FILTERS)
