"""The outside programs the tests drive, installed on first use into cached
virtualenvs under ``var/`` with pinned versions, so that README's test
command runs everything pip can install on a fresh machine, exactly as
``.ci/run`` does: the stock ``openstack`` CLI (tests/clients), upstream
OpenStack Placement (tests/mirroring, tests/dashboard), and openstacksdk with
Ansible's openstack.cloud collection (tests/clients/test_sdk_and_ansible.py).

Each virtualenv records the pins it was built with; a change of pins builds
it again. ``OPENSTACK_CLI`` and ``UPSTREAM_PLACEMENT_VENV`` still point the
tests at tools installed elsewhere."""

import fcntl
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

VAR = Path(os.environ.get("CORRAL_VAR_DIR") or Path(__file__).resolve().parent.parent / "var")

OPENSTACK_CLI_PINS = ("python-openstackclient==10.5.0", "osc-placement==4.9.1", "openstacksdk==4.22.0")
UPSTREAM_PLACEMENT_PINS = ("openstack-placement==16.0.0", "gunicorn==27.0.1")
# Ansible with its openstack.cloud collection: the ansible package carries it (12.3.0 is the newest for
# Python 3.11, with openstack.cloud 2.5.0, which reads openstack.version: gone from openstacksdk 4.15.0,
# hence 4.14.0 here; openstacksdk 4.22.0 itself is tested from the CLI's virtualenv).
ANSIBLE_PINS = ("ansible==12.3.0", "ansible-core==2.19.14", "openstacksdk==4.14.0")


class ProvisionError(RuntimeError):
    """A tool could not be installed: pip's own words are in the message."""


def cached_venv(name: str, pins: tuple[str, ...], executable: str) -> Path:
    """var/<name>, a virtualenv holding ``pins``, built once (under a lock,
    so that concurrent test runs wait for one build) and rebuilt when the
    pins change."""
    venv = VAR / name
    stamp = venv / ".corral-pins"
    wanted = "\n".join(pins) + "\n"

    def ready() -> bool:
        return (venv / "bin" / executable).exists() and stamp.exists() and stamp.read_text() == wanted

    if ready():
        return venv
    VAR.mkdir(parents=True, exist_ok=True)
    with open(VAR / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready():
            return venv
        sys.stderr.write(f"\nInstalling {', '.join(pins)} into {venv} (first use; cached afterwards)...\n")
        steps = [[sys.executable, "-m", "venv", "--clear", str(venv)], [str(venv / "bin/pip"), "install", "-q", *pins]]
        for step in steps:
            result = subprocess.run(step, capture_output=True, text=True, timeout=1800)
            if result.returncode != 0:
                raise ProvisionError(f"{' '.join(step)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
        stamp.write_text(wanted)
    return venv


def openstack_cli() -> str:
    """The path of the stock ``openstack`` CLI (with osc-placement)."""
    configured = os.environ.get("OPENSTACK_CLI")
    if configured:
        found = shutil.which(configured)
        if found is None:
            raise ProvisionError(f"OPENSTACK_CLI={configured!r} is not an executable")
        return found
    return str(cached_venv("oscvenv", OPENSTACK_CLI_PINS, "openstack") / "bin/openstack")


def upstream_placement_venv() -> Path:
    """A virtualenv with upstream Placement 16.0.0 and gunicorn."""
    configured = os.environ.get("UPSTREAM_PLACEMENT_VENV")
    if configured:
        return Path(configured)
    return cached_venv("upstream-placement-venv", UPSTREAM_PLACEMENT_PINS, "placement-manage")


def ansible_venv() -> Path:
    """A virtualenv with Ansible, its openstack.cloud collection and the openstacksdk that collection runs on."""
    return cached_venv("ansible-venv", ANSIBLE_PINS, "ansible-playbook")


def install_in_background() -> threading.Thread:
    """Build both cached virtualenvs in a thread, so that a whole run's
    other tests go on meanwhile; the tests that need them wait on the
    lock above. A failure is left for those tests to meet and report."""

    def install() -> None:
        for build in (upstream_placement_venv, openstack_cli, ansible_venv):
            try:
                build()
            except (ProvisionError, OSError, subprocess.SubprocessError):
                pass

    thread = threading.Thread(target=install, name="provision", daemon=True)
    thread.start()
    return thread
