"""The outside programs the tests drive, installed on first use into cached
virtualenvs under ``var/`` with pinned versions, so that README's test
command runs everything pip can install on a fresh machine, exactly as
``.ci/run`` does: the stock ``openstack`` CLI (tests/clients) and upstream
OpenStack Placement (tests/mirroring, tests/dashboard).

Each virtualenv records the pins it was built with; a change of pins builds
it again. ``OPENSTACK_CLI`` and ``UPSTREAM_PLACEMENT_VENV`` still point the
tests at tools installed elsewhere."""

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
KEYSTONE_PINS = ("keystone==30.0.0", "gunicorn==27.0.1")


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


def keystone_venv() -> Path:
    """A virtualenv with Keystone 30.0.0 and gunicorn (tests/keystone)."""
    configured = os.environ.get("KEYSTONE_VENV")
    if configured:
        return Path(configured)
    return cached_venv("keystone-venv", KEYSTONE_PINS, "keystone-manage")


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
    """Build the cached virtualenvs (and Keystone's template) in a thread, so that a whole run's
    other tests go on meanwhile; the tests that need them wait on the
    lock above. A failure is left for those tests to meet and report."""

    def install() -> None:
        for build in (upstream_placement_venv, openstack_cli, keystone_template):
            try:
                build()
            except (ProvisionError, OSError, subprocess.SubprocessError):
                pass

    thread = threading.Thread(target=install, name="provision", daemon=True)
    thread.start()
    return thread
