"""No console form post may cause a 500 (issue 11): every write form of the
console gets NUL in each field, non-finite, huge and negative numbers in
each numeric field, very long values and an oversized body. Each must be
refused (the form shown again with its error, a 4xx, or a redirect with an
error message) and leave every table as it was."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from aggregates.host_aggregates import services as aggregate_services
from aggregates.identity import services as identity
from tests.plugins.hostile_payloads import changed_tables, snapshot

NUMBERS = ("nan", "inf", "-inf", "1e999", str(2**64), "-1", "1.5")


def form_mutations(fields, numeric=(), choices=("action",)):
    """(name, data) of every hostile variant of a valid form ``fields``
    (``choices`` name buttons whose unknown values mean the default)."""
    yield "oversized body", {**fields, next(iter(fields)): "a" * (3 * 1024 * 1024)}
    for name, value in fields.items():
        if name in choices:
            continue
        yield f"NUL in {name}", {**fields, name: value + "\x00"}
        if name in numeric:
            for number in NUMBERS:
                yield f"{number} in {name}", {**fields, name: number}
        else:
            yield f"too long {name}", {**fields, name: "x" * 70000}


@pytest.fixture
def console(db, make_host, system):
    user = get_user_model().objects.create_user("fuzz-admin", password="pw", is_staff=True, is_superuser=True)
    identity.grant(user, identity.ensure_project("admin"), "admin")
    client = Client(raise_request_exception=False)  # a 500 is a finding, not a crash of the test
    client.force_login(user)
    make_host("node1")
    make_host("node2")
    aggregate = aggregate_services.create_aggregate(system, "agg", "az1")
    aggregate_services.add_host(system, aggregate.id, "node1")
    # The first page that reads placement creates Corral's service user: do
    # that before any snapshot.
    assert client.get(f"/aggregates/{aggregate.id}/").status_code == 200
    return client, aggregate.id


@pytest.mark.heavy
def test_console_forms_refuse_every_hostile_post(console):
    client, agg = console
    forms = [
        ("/aggregates/new/", {"name": "fz", "availability_zone": "fzaz", "hosts": "node2"}, ()),
        (f"/aggregates/{agg}/edit/", {"name": "renamed", "availability_zone": "az2"}, ()),
        (
            f"/aggregates/{agg}/metadata/",
            {"form-TOTAL_FORMS": "1", "form-INITIAL_FORMS": "0", "form-0-key": "k", "form-0-value": "v"},
            ("form-TOTAL_FORMS", "form-INITIAL_FORMS"),
        ),
        (f"/aggregates/{agg}/hosts/add/", {"hosts": "node2"}, ()),
        (f"/aggregates/{agg}/hosts/remove/", {"host": "node1"}, ()),
        ("/hosts/node1/status/", {"action": "disable", "disabled_reason": "r"}, ()),
        (
            "/flavors/new/",
            {
                "name": "fz",
                "id": "fz",
                "ram": "512",
                "vcpus": "1",
                "disk": "1",
                "ephemeral": "0",
                "swap": "0",
                "description": "d",
            },
            ("ram", "vcpus", "disk", "ephemeral", "swap"),
        ),
        (
            "/images/new/",
            {
                "name": "fz",
                "disk_format": "qcow2",
                "container_format": "bare",
                "visibility": "private",
                "owner": identity.ensure_project("admin").id,
                "min_disk": "0",
                "min_ram": "0",
            },
            ("min_disk", "min_ram"),
        ),
        (
            "/server-groups/new/",
            {"name": "fz", "policy": "anti-affinity", "max_server_per_host": "2", "project": "admin"},
            ("max_server_per_host",),
        ),
    ]
    problems, count = [], 0
    before = snapshot()  # each refused post leaves it as it was: the next post's "before"
    for path, fields, numeric in forms:
        for name, data in form_mutations(fields, numeric):
            if name in {"-1 in form-TOTAL_FORMS", "1.5 in form-TOTAL_FORMS"} or name.startswith("-1 in form-INITIAL"):
                continue
            count += 1
            response = client.post(path, data)
            after = snapshot()
            changed, before = changed_tables(before, after), after
            # Refused: the form again with its error (200, 400) or a redirect
            # with a message (302); never a 5xx, never a change.
            if response.status_code >= 500 or changed:
                problems.append(f"POST {path} [{name}]: {response.status_code} changed {changed}")
    print(f"\nconsole: {count} payloads")
    assert not problems, f"{len(problems)} of {count} posts misbehaved:\n" + "\n".join(problems[:60])
