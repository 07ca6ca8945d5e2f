"""Twenty boots at once against an instances quota of ten: exactly ten
servers, ten of Nova's 403s. Runs on the database the suite runs on
(PostgreSQL in CI, SQLite by default): each check locks its project's
quota row, so the next one counts what the last wrote."""

from collections import Counter

import pytest

from aggregates.identity.models import Project
from aggregates.servers.models import Server
from tests.helpers import run_together
from tests.plugins.cloud import cli_body
from tests.plugins.tiers import many_connections

pytestmark = many_connections

BOOTS = 20
QUOTA = 10


@pytest.mark.heavy
def test_twenty_parallel_boots_against_a_quota_of_ten(cloud, admin_api, settings):
    settings.FOLLOW_UP_WAIT_SECONDS = None  # each build in its request's thread (one connection each)
    cloud.host("big", vcpus=64, memory_mb=262144)
    flavor, image = cloud.flavor(), cloud.image()
    demo = Project.objects.get(name="demo").id
    assert admin_api.put(f"/os-quota-sets/{demo}", {"quota_set": {"instances": QUOTA}}).status_code == 200

    responses = run_together(
        *[
            (lambda i=i: admin_api.post("/servers", cli_body(flavor, image, f"vm{i}"), version="2.100"))
            for i in range(BOOTS)
        ]
    )
    assert Counter(r.status_code for r in responses) == {202: QUOTA, 403: BOOTS - QUOTA}
    for response in responses:
        if response.status_code == 403:
            assert response.json()["forbidden"]["message"] == (
                f"Quota exceeded for instances: Requested 1, but already used {QUOTA} of {QUOTA} instances"
            )
    assert Server.objects.filter(project_id=demo).count() == QUOTA
    assert admin_api.get("/limits").json()["limits"]["absolute"]["totalInstancesUsed"] == QUOTA
