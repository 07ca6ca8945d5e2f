"""manage.py seed_demo: a realistic small cloud, loaded once."""

from io import StringIO

from django.apps import apps
from django.core.management import call_command

from aggregates.addressing.models import AddressAllocation, AddressPool
from aggregates.demo import seed as demo
from aggregates.flavors.models import Flavor
from aggregates.host_aggregates.models import Aggregate, AggregateMetadata
from aggregates.hosts.models import Service
from aggregates.images.models import Image
from aggregates.images.services import properties_of
from aggregates.server_groups.models import ServerGroup
from aggregates.servers.models import Server
from tests.plugins.cloud import own_placement


def every_row():
    return {
        model.__name__: sorted(map(repr, model.objects.values_list()))
        for model in apps.get_app_config("aggregates").get_models()
    }


def test_seed_builds_the_demo_cloud_and_a_second_run_changes_nothing(transactional_db, settings, monkeypatch):
    own_placement(settings, monkeypatch)  # the group's members are booted: placement in process
    out = StringIO()
    call_command("seed_demo", stdout=out)
    assert "Demo cloud ready" in out.getvalue()
    assert Service.objects.filter(binary="nova-compute").count() == len(demo.HOSTS) == 46
    assert Aggregate.objects.count() == len(demo.AGGREGATES)
    assert Flavor.objects.count() == len(demo.FLAVORS) == 12
    assert sorted(AddressPool.objects.values_list("name", "kind")) == [
        ("gpu-net", "internal"),
        ("private", "internal"),
        ("public", "external"),
    ]
    assert set(AggregateMetadata.objects.filter(key="availability_zone").values_list("value", flat=True)) == {
        "az1",
        "az2",
        "az3",
    }
    assert Service.objects.filter(disabled=True).count() == len(demo.DISABLED_HOSTS)
    images = {image.name: image for image in Image.objects.all()}
    assert set(images) == {"demo-linux", "demo-windows"}
    for image in images.values():
        assert (image.status, image.visibility, image.size) == (Image.ACTIVE, Image.PUBLIC, demo.IMAGE_BYTES)
    assert properties_of(images["demo-windows"])["os_distro"] == "windows"
    group = ServerGroup.objects.get()
    assert (group.name, group.policy, group.project_id) == ("web", "anti-affinity", demo.PROJECTS[1][1])
    members = Server.objects.filter(uuid__in=group.members.values("server_uuid"))
    assert sorted(members.values_list("name", "vm_state")) == [(n, "active") for n in ("web-1", "web-2", "web-3")], [
        m.fault for m in members
    ]
    assert len(set(members.values_list("host", flat=True))) == 3  # anti-affinity: a host each
    assert AddressAllocation.objects.filter(server__in=members, kind="fixed").count() == 3

    before = every_row()
    out = StringIO()
    call_command("seed_demo", stdout=out)
    assert "(0 objects created)" in out.getvalue()
    assert every_row() == before


def test_demo_users_log_in_with_their_roles(db, client):
    call_command("seed_demo", stdout=StringIO())
    for username, role, project, _ in demo.USERS:
        response = client.post(
            "/identity/v3/auth/tokens",
            {
                "auth": {
                    "identity": {
                        "methods": ["password"],
                        "password": {
                            "user": {"name": username, "domain": {"name": "Default"}, "password": demo.DEMO_PASSWORD}
                        },
                    },
                    "scope": {"project": {"name": project, "domain": {"name": "Default"}}},
                }
            },
            content_type="application/json",
        )
        assert response.status_code == 201, response.content
        assert role in {r["name"] for r in response.json()["token"]["roles"]}


def test_demo_api_views_match_the_demo(db, admin_api):
    call_command("seed_demo", stdout=StringIO())
    zones = admin_api.get("/os-availability-zone").json()["availabilityZoneInfo"]
    assert {z["zoneName"] for z in zones} == {"az1", "az2", "az3", "nova"}
    acme = next(a for a in admin_api.get("/os-aggregates").json()["aggregates"] if a["name"] == "acme-dedicated")
    assert acme["metadata"]["filter_tenant_id"] == demo.PROJECTS[2][1]
    assert acme["hosts"] == demo.ACME_HOSTS
    specs = admin_api.get("/flavors/ssd.xlarge/os-extra_specs", version="2.86").json()["extra_specs"]
    assert specs == {"aggregate_instance_extra_specs:ssd": "true", "hw:cpu_policy": "dedicated"}


def test_every_public_demo_flavor_can_boot_somewhere_in_the_demo(db, settings):
    """Each public flavor, with the demo image its aggregates ask for, has at
    least one enabled host that passes every aggregate filter the demo enables."""
    from aggregates.management.commands.serve_demo import DEMO_FILTERS
    from aggregates.scheduling import engine, filters, services

    call_command("seed_demo", stdout=StringIO())
    settings.ENABLED_FILTERS = list(DEMO_FILTERS)
    enabled = filters.enabled_filters(settings.ENABLED_FILTERS)
    hosts = engine.load_hosts(engine.load_aggregates())
    for flavor in Flavor.objects.filter(is_public=True):
        wants_windows = flavor.extra_spec_items.filter(value="windows").exists()
        image = Image.objects.get(name="demo-windows" if wants_windows else "demo-linux")
        spec = services.request_spec_for(flavor, image, demo.PROJECTS[1][1])
        fits = [h.host for h in hosts if all(f.host_passes(h, spec) is None for f in enabled)]
        assert fits, flavor.name
