"""The demo's stand-in agents: uptime for the hypervisors, heartbeats for the control plane."""

from datetime import timedelta

from django.core.management import call_command
from django.utils import timezone

from aggregates.demo import seed as demo
from aggregates.hosts.models import ComputeNode, Service


def _seeded():
    call_command("seed_demo", stdout=open("/dev/null", "w"))


def test_every_up_demo_host_answers_its_uptime(db, admin_api):
    _seeded()
    demo.heartbeat()
    node = ComputeNode.objects.exclude(host__in=demo.DOWN_HOSTS).first()
    response = admin_api.get(f"/os-hypervisors/{node.uuid}/uptime", version="2.87")
    assert response.status_code == 200, response.content
    uptime = response.json()["hypervisor"]["uptime"]
    assert " up 3 days," in uptime and "load average" in uptime


def test_control_plane_services_stay_up_with_the_heartbeat(db, admin_api):
    _seeded()
    long_ago = timezone.now() - timedelta(hours=1)
    Service.objects.filter(host=demo.CONTROLLER).update(last_seen_up=long_ago, created_at=long_ago)
    listed = {(s["binary"], s["state"]) for s in admin_api.get("/os-services").json()["services"]}
    assert ("nova-scheduler", "down") in listed
    demo.heartbeat()
    zones = admin_api.get("/os-availability-zone/detail").json()["availabilityZoneInfo"]
    internal = next(z for z in zones if z["zoneName"] == "internal")
    states = [svc for services in internal["hosts"].values() for svc in services.values()]
    assert states and all(state["active"] and state["available"] for state in states)
