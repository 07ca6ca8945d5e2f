"""The outside programs the tests drive, installed on first use into cached
virtualenvs under ``var/`` with pinned versions, so that README's test
command runs everything pip can install on a fresh machine, exactly as
``.ci/run`` does: the stock ``openstack`` CLI (tests/clients), upstream
OpenStack Placement (tests/mirroring, tests/dashboard), and openstacksdk with
Ansible's openstack.cloud collection (tests/clients/test_sdk_and_ansible.py).

Each virtualenv records the pins it was built with; a change of pins builds
it again. ``OPENSTACK_CLI``, ``UPSTREAM_PLACEMENT_VENV`` and ``HAPROXY``
still point the tests at tools installed elsewhere."""

import fcntl
import grp
import os
import pwd
import shutil
import subprocess
import sys
import threading
from pathlib import Path

VAR = Path(os.environ.get("CORRAL_VAR_DIR") or Path(__file__).resolve().parent.parent / "var")

OPENSTACK_CLI_PINS = ("python-openstackclient==10.5.0", "osc-placement==4.9.1", "openstacksdk==4.22.0")
UPSTREAM_PLACEMENT_PINS = ("openstack-placement==16.0.0", "gunicorn==27.0.1")
# Debian's haproxy and the libraries it links that a minimal system lacks.
HAPROXY_PACKAGES = ("haproxy", "liblua5.3-0", "libopentracing-c-wrapper0", "libopentracing1")
# Ansible with its openstack.cloud collection: the ansible package carries it (12.3.0 is the newest for
# Python 3.11, with openstack.cloud 2.5.0, which reads openstack.version: gone from openstacksdk 4.15.0,
# hence 4.14.0 here; openstacksdk 4.22.0 itself is tested from the CLI's virtualenv).
ANSIBLE_PINS = ("ansible==12.3.0", "ansible-core==2.19.14", "openstacksdk==4.14.0")
KEYSTONE_PINS = ("keystone==30.0.0", "gunicorn==27.0.1")
# Upstream's API test suite, run against Corral by bench/tempest_api.sh (not by the tests).
TEMPEST_PINS = ("tempest==47.0.0",)


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


def haproxy() -> str:
    """The path of an ``haproxy`` executable: ``HAPROXY``, else the
    machine's, else Debian's packages (``apt-get download``, no install)
    unpacked into var/haproxy/ behind a script that points the loader at
    their libraries."""
    configured = os.environ.get("HAPROXY") or shutil.which("haproxy") or shutil.which("/usr/sbin/haproxy")
    if configured:
        return configured
    root = VAR / "haproxy"
    wrapper = root / "haproxy"
    stamp = root / ".corral-packages"
    wanted = "\n".join(HAPROXY_PACKAGES) + "\n"

    def ready() -> bool:
        return wrapper.exists() and stamp.exists() and stamp.read_text() == wanted

    if ready():
        return str(wrapper)
    VAR.mkdir(parents=True, exist_ok=True)
    with open(VAR / ".haproxy.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready():
            return str(wrapper)
        sys.stderr.write(f"\nUnpacking Debian's {', '.join(HAPROXY_PACKAGES)} into {root} (first use)...\n")
        shutil.rmtree(root, ignore_errors=True)
        debs = root / "debs"
        debs.mkdir(parents=True)

        def download() -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                ["apt-get", "download", *HAPROXY_PACKAGES], cwd=debs, capture_output=True, text=True, timeout=600
            )

        try:
            fetched = download()
            if fetched.returncode != 0 and os.geteuid() == 0:  # no package lists yet: read them, once
                subprocess.run(["apt-get", "update", "-q"], capture_output=True, timeout=600)
                fetched = download()
        except (OSError, subprocess.SubprocessError) as exc:
            raise ProvisionError(f"apt-get download {' '.join(HAPROXY_PACKAGES)} failed: {exc}") from exc
        if fetched.returncode != 0:
            raise ProvisionError(f"apt-get download {' '.join(HAPROXY_PACKAGES)} failed:\n{fetched.stderr[-3000:]}")
        for deb in sorted(debs.glob("*.deb")):
            subprocess.run(["dpkg", "-x", str(deb), str(root / "root")], check=True, capture_output=True, timeout=120)
        libraries = ":".join(str(path) for path in sorted((root / "root/usr/lib").glob("*-linux-gnu")))
        binary = root / "root/usr/sbin/haproxy"
        wrapper.write_text(f'#!/bin/sh\nLD_LIBRARY_PATH="{libraries}" exec "{binary}" "$@"\n')
        wrapper.chmod(0o755)
        check = subprocess.run([str(wrapper), "-v"], capture_output=True, text=True, timeout=30)
        if check.returncode != 0:
            raise ProvisionError(f"the unpacked haproxy does not run:\n{check.stderr[-3000:]}")
        shutil.rmtree(debs)
        stamp.write_text(wanted)
    return str(wrapper)


def ansible_venv() -> Path:
    """A virtualenv with Ansible, its openstack.cloud collection and the openstacksdk that collection runs on."""
    return cached_venv("ansible-venv", ANSIBLE_PINS, "ansible-playbook")


def keystone_venv() -> Path:
    """A virtualenv with Keystone 30.0.0 and gunicorn (tests/keystone)."""
    configured = os.environ.get("KEYSTONE_VENV")
    if configured:
        return Path(configured)
    return cached_venv("keystone-venv", KEYSTONE_PINS, "keystone-manage")


def tempest_venv() -> Path:
    """A virtualenv with Tempest 47.0.0 (bench/tempest_api.sh)."""
    configured = os.environ.get("TEMPEST_VENV")
    if configured:
        return Path(configured)
    return cached_venv("tempest-venv", TEMPEST_PINS, "tempest")


KEYSTONE_TEMPLATE_CONF = """\
[DEFAULT]
log_file = {dir}/keystone.log
[database]
connection = sqlite:///{dir}/keystone.db
[token]
provider = fernet
expiration = 3600
[fernet_tokens]
key_repository = {dir}/fernet-keys
[credential]
key_repository = {dir}/credential-keys
[cache]
enabled = false
[identity]
# bcrypt's cheapest cost: the tests' logins are many, their passwords test values
password_hash_rounds = 4
"""
KEYSTONE_ADMIN_PASSWORD = "keystone-admin-secret"
# Bootstrap's identity endpoints, before a run's Keystone has its port (the
# fixture points them at it).
KEYSTONE_PLACEHOLDER_URL = "http://127.0.0.1:5000/v3"


def keystone_template() -> Path:
    """var/keystone-template: a Keystone database and key repositories made
    once by ``keystone-manage`` (db_sync, fernet_setup and credential_setup
    with --keystone-user/--keystone-group, bootstrap with an admin of project
    admin and region RegionOne), copied for each run (about a minute of
    keystone-manage runs on two loaded cores, saved per run)."""
    venv = keystone_venv()
    template = VAR / "keystone-template"
    stamp = template / ".corral-pins"
    wanted = "\n".join(KEYSTONE_PINS) + "\n" + KEYSTONE_TEMPLATE_CONF
    if stamp.exists() and stamp.read_text() == wanted:
        return template
    with open(VAR / ".keystone-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and stamp.read_text() == wanted:
            return template
        building = VAR / "keystone-template.building"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        conf = building / "keystone.conf"
        conf.write_text(KEYSTONE_TEMPLATE_CONF.format(dir=building))
        owner = building.stat()
        user, group = pwd.getpwuid(owner.st_uid).pw_name, grp.getgrgid(owner.st_gid).gr_name
        manage = [str(venv / "bin/keystone-manage"), "--config-file", str(conf)]
        urls = [f"--bootstrap-{kind}-url={KEYSTONE_PLACEHOLDER_URL}" for kind in ("admin", "internal", "public")]
        steps = [
            [*manage, "db_sync"],
            [*manage, "fernet_setup", "--keystone-user", user, "--keystone-group", group],
            [*manage, "credential_setup", "--keystone-user", user, "--keystone-group", group],
            [
                *manage,
                "bootstrap",
                "--bootstrap-password",
                KEYSTONE_ADMIN_PASSWORD,
                "--bootstrap-region-id",
                "RegionOne",
                *urls,
            ],
        ]
        for step in steps:
            result = subprocess.run(step, capture_output=True, text=True, timeout=600)
            if result.returncode != 0:
                raise ProvisionError(f"{' '.join(step)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
        (building / "keystone.log").unlink(missing_ok=True)
        conf.unlink()
        shutil.rmtree(template, ignore_errors=True)
        building.rename(template)
        stamp.write_text(wanted)
    return template


def install_in_background() -> threading.Thread:
    """Build the cached virtualenvs (and Keystone's template) and unpack haproxy in a thread, so that a whole run's
    other tests go on meanwhile; the tests that need them wait on the
    lock above. A failure is left for those tests to meet and report."""

    def install() -> None:
        for build in (upstream_placement_venv, openstack_cli, keystone_template, haproxy, ansible_venv):
            try:
                build()
            except (ProvisionError, OSError, subprocess.SubprocessError):
                pass

    thread = threading.Thread(target=install, name="provision", daemon=True)
    thread.start()
    return thread
