"""End to end, as most users boot: openstacksdk's cloud layer
(``create_server(..., wait=True)``) and Ansible's ``openstack.cloud.server``
with their defaults (``wait: true``, ``auto_ip`` on), against the demo cloud
served live, with a clouds.yaml holding only auth and region. Both need an
address in the first ACTIVE answer and an external IPv4 (the demo gives a
floating one from its "public" pool); Ansible's second run changes nothing.
The stock CLI's ``server show`` shows the addresses. The clients live in
cached virtualenvs (tests/provision.py): openstacksdk 4.22.0 in the CLI's,
Ansible 12.3.0 (openstack.cloud 2.5.0, on openstacksdk 4.14.0) in its own."""

import json
import os
import subprocess

import pytest

from aggregates.addressing.models import AddressAllocation
from aggregates.demo import seed as demo
from aggregates.identity import service_token
from aggregates.servers.models import Server
from placement.standards import sync_standard_names
from tests import provision
from tests.plugins.demo_snapshot import seeded_demo

CLOUDS_YAML = """\
clouds:
  corral:
    auth:
      auth_url: {base}/identity
      username: demo
      password: {password}
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: {region}
"""

SDK_SCRIPT = """\
import json, sys
import openstack

conn = openstack.connect(cloud="corral")
server = conn.create_server("sdk-vm", image="demo-linux", flavor="m1.tiny", wait=True, timeout=120)
print(json.dumps({"id": server.id, "status": server.status, "public_v4": server.public_v4,
                  "private_v4": server.private_v4, "interface_ip": server.interface_ip,
                  "addresses": server.addresses}))
sys.stdout.flush()
assert conn.delete_server(server.id, wait=True, timeout=120)
"""

PLAYBOOK = """\
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - openstack.cloud.server:
        cloud: corral
        name: ansible-vm
        image: demo-linux
        flavor: m1.tiny
        state: "{{ wanted | default('present') }}"
      register: vm
    - ansible.builtin.copy:
        content: "{{ vm | to_json }}"
        dest: "{{ out }}"
"""


@pytest.fixture
def demo_cloud(live_server, transactional_db, settings, tmp_path, sdk_clients):
    """The demo cloud served live (placement in process, as serve_demo runs
    it, AUTO_ASSIGN_FLOATING_IP on as serve_demo turns it on); returns a
    function running a command of the clients' virtualenv with the clouds.yaml."""
    settings.AUTH_STRATEGY, settings.PUBLIC_URL = "keystone", ""
    settings.PLACEMENT_URL, settings.PLACEMENT_AUTH_TOKEN = "", ""
    settings.AUTO_ASSIGN_FLOATING_IP = True
    service_token.forget_service_token()
    sync_standard_names()
    seeded_demo()
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(
        CLOUDS_YAML.format(base=live_server.url, password=demo.DEMO_PASSWORD, region=settings.REGION_NAME)
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OS_", "ANSIBLE_"))}
    env.update(HOME=str(tmp_path), OS_CLIENT_CONFIG_FILE=str(clouds), ANSIBLE_LOCALHOST_WARNING="False")
    env.pop("XDG_CONFIG_HOME", None)

    sdk_python, ansible_bin = sdk_clients

    def run(program, *args):
        command = [str(sdk_python)] if program == "python" else [str(ansible_bin / program)]
        done = subprocess.run(
            [*command, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{program} {args}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        return done.stdout

    run.tmp_path = tmp_path
    run.env = env
    return run


def test_sdk_and_ansible_boot_with_their_defaults(demo_cloud, sdk_clients):
    out = demo_cloud("python", "-c", SDK_SCRIPT)
    booted = json.loads(out.strip().splitlines()[-1])
    assert booted["status"] == "ACTIVE"
    [(network, entries)] = booted["addresses"].items()
    assert network == "private"
    assert [e["OS-EXT-IPS:type"] for e in entries] == ["fixed", "floating"]
    assert booted["public_v4"] == entries[1]["addr"] and booted["public_v4"].startswith("203.0.113.")
    assert booted["private_v4"] == entries[0]["addr"] and booted["private_v4"].startswith("10.0.")
    server = Server.objects.get(uuid=booted["id"])
    assert server.vm_state == "deleted" and not AddressAllocation.objects.filter(server=server).exists()

    tmp_path = demo_cloud.tmp_path
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    python = f"ansible_python_interpreter={sdk_clients[1] / 'python'}"
    first = tmp_path / "first.json"
    demo_cloud("ansible-playbook", "-i", "localhost,", "play.yml", "-e", python, "-e", f"out={first}")
    result = json.loads(first.read_text())
    assert result["changed"] is True
    vm = Server.objects.get(name="ansible-vm", deleted_at__isnull=True)
    assert result["server"]["id"] == str(vm.uuid) and result["server"]["status"] == "ACTIVE"
    [floating] = [e for e in result["server"]["addresses"]["private"] if e["OS-EXT-IPS:type"] == "floating"]
    assert floating["addr"].startswith("203.0.113.")

    second = tmp_path / "second.json"
    demo_cloud("ansible-playbook", "-i", "localhost,", "play.yml", "-e", python, "-e", f"out={second}")
    assert json.loads(second.read_text())["changed"] is False
    assert Server.objects.filter(name="ansible-vm", deleted_at__isnull=True).count() == 1

    # The stock CLI shows the addresses.
    shown = subprocess.run(
        [provision.openstack_cli(), "--os-cloud", "corral", "server", "show", "ansible-vm", "-f", "json"],
        cwd=tmp_path,
        env=demo_cloud.env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert shown.returncode == 0, shown.stderr
    addresses = json.loads(shown.stdout)["addresses"]
    held = list(AddressAllocation.objects.filter(server=vm).order_by("kind").values_list("address", flat=True))
    assert addresses == {"private": held}

    gone = tmp_path / "gone.json"
    absent = ("-e", "wanted=absent")
    demo_cloud("ansible-playbook", "-i", "localhost,", "play.yml", "-e", python, "-e", f"out={gone}", *absent)
    assert json.loads(gone.read_text())["changed"] is True
    vm.refresh_from_db()
    assert vm.vm_state == "deleted" and not AddressAllocation.objects.filter(server=vm).exists()
