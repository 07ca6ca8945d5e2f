"""The deployment files of config/deploy/: one systemd unit per role, the
migration a one-shot step of its own that the others only follow, the web
unit on the repository's gunicorn configuration, and an environment file
naming only variables Corral (or gunicorn) reads, each documented."""

import configparser
import re
import runpy
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "config" / "deploy"
ROLES = ("corral-web", "corral-worker", "corral-beat")
# Read by gunicorn itself (not by Corral's files): the proxies whose X-Forwarded-* headers it trusts.
GUNICORN_OWN = {"FORWARDED_ALLOW_IPS"}


def unit(name):
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str
    parser.read_string((DEPLOY / f"{name}.service").read_text())
    return parser


def test_migrate_is_a_one_shot_step_the_other_roles_follow_and_never_repeat():
    migrate = unit("corral-migrate")
    assert migrate["Service"]["Type"] == "oneshot"
    assert migrate["Service"]["ExecStart"].endswith("manage.py migrate --noinput")
    for role in ROLES:
        service = unit(role)
        assert "corral-migrate.service" in service["Unit"]["After"].split()
        assert "migrate" not in service["Service"]["ExecStart"]
        assert service["Service"]["EnvironmentFile"] == migrate["Service"]["EnvironmentFile"]
        assert service["Install"]["WantedBy"] == "multi-user.target"


def test_the_web_unit_runs_the_gunicorn_configuration_and_waits_out_its_graceful_timeout():
    web = unit("corral-web")["Service"]
    assert web["ExecStart"].endswith("gunicorn -c config/gunicorn.conf.py")
    assert (ROOT / "config" / "gunicorn.conf.py").exists()
    assert web["ExecReload"] == "/bin/kill -s HUP $MAINPID"
    assert web["KillMode"] == "mixed"
    conf = runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))
    assert int(web["TimeoutStopSec"]) > conf["graceful_timeout"]
    assert unit("corral-worker")["Service"]["ExecStart"].endswith("celery -A config worker -l info")
    assert unit("corral-beat")["Service"]["ExecStart"].endswith("celery -A config beat -l info")


def read_variables():
    sources = (ROOT / "config" / "settings.py").read_text() + (ROOT / "config" / "gunicorn.conf.py").read_text()
    read = r"""(?:environ\.get\(|environ\[|env_int\(|env_bool\(|_int\()\s*["']([A-Z][A-Z0-9_]*)["']"""
    return set(re.findall(read, sources))


def test_the_environment_file_names_only_variables_that_are_read_and_documented():
    named = set(re.findall(r"^#?([A-Z][A-Z0-9_]*)=", (DEPLOY / "corral.env.example").read_text(), re.MULTILINE))
    assert {"SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "PUBLIC_URL", "WEB_BIND"} <= named
    unknown = named - read_variables() - GUNICORN_OWN - {"DJANGO_SETTINGS_MODULE"}
    assert unknown == set()
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]*)`", (ROOT / "docs" / "configuration.md").read_text()))
    documented |= set(re.findall(r"`([A-Z][A-Z0-9_]*)`", (ROOT / "docs" / "deployment.md").read_text()))
    assert named - documented - {"DJANGO_SETTINGS_MODULE"} == set()


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_finds_nothing_wrong_with_the_units_but_the_programs_not_installed_here():
    units = [str(path) for path in sorted(DEPLOY.glob("*.service"))]
    run = subprocess.run(["systemd-analyze", "verify", *units], capture_output=True, text=True, timeout=60)
    problems = [line for line in run.stderr.splitlines() if line.strip() and "is not executable" not in line]
    assert problems == []
