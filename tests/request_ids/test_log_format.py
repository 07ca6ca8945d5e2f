"""The log format built from LOG_FORMAT: ``json`` gives one JSON object a
line with the request ids, user, project and route of the request that
caused it; ``text`` names the request ids too; anything else is refused."""

import json
import logging.config

import pytest
from django.conf import settings

from config import request_context
from tests.plugins.api import create_aggregate

pytestmark = pytest.mark.django_db


@pytest.fixture
def configure_logging():
    """Configure logging with the builder's output, writing to the (captured)
    stderr; settings.LOGGING is applied again afterwards."""

    def _configure(log_format):
        config = request_context.logging_config(log_format, "INFO")
        config["handlers"]["console"]["stream"] = "ext://sys.stderr"
        logging.config.dictConfig(config)

    yield _configure
    logging.config.dictConfig(settings.LOGGING)


def add_host(api, host, global_id):
    aggregate = create_aggregate(api, "agg1")
    response = api.post(
        f"/os-aggregates/{aggregate['id']}/action",
        {"add_host": {"host": host}},
        headers={"X-OpenStack-Request-ID": global_id},
    )
    assert response.status_code == 200, response.content
    return response


def test_json_lines_carry_the_request_ids(configure_logging, capsys, admin_api, make_host, global_id):
    make_host("h1")
    configure_logging("json")
    response = add_host(admin_api, "h1", global_id)
    logging.getLogger("tests.request_ids").warning("outside any request: %s", "no ids")

    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    keys = ["time", "level", "logger", "request_id", "global_request_id", "user", "project", "route", "message"]
    assert lines and all(list(line) == keys for line in lines), lines
    (created,) = [line for line in lines if line["message"].startswith("Added host h1 to aggregate agg1")]
    assert created["request_id"] == response["X-OpenStack-Request-ID"]
    assert created["global_request_id"] == global_id
    assert (created["level"], created["logger"]) == ("INFO", "aggregates.host_aggregates.services")
    assert created["user"] == "admin-user" and created["project"]
    assert created["route"] == "POST /compute/v2.1/os-aggregates/<str:aggregate_id>/action"
    assert created["time"].endswith("+00:00")
    outside = lines[-1]
    assert outside["message"] == "outside any request: no ids"
    assert [outside[key] for key in ("request_id", "global_request_id", "user", "project", "route")] == [None] * 5


def test_a_traceback_stays_inside_its_json_line(configure_logging, capsys):
    configure_logging("json")
    try:
        raise ValueError("boom\non two lines")
    except ValueError:
        logging.getLogger("tests.request_ids").exception("it failed")
    (line,) = [json.loads(text) for text in capsys.readouterr().err.splitlines()]
    assert line["message"] == "it failed" and "ValueError: boom\non two lines" in line["exception"]


def test_text_lines_name_the_request_ids(configure_logging, capsys, admin_api, make_host, global_id):
    make_host("h1")
    configure_logging("text")
    response = add_host(admin_api, "h1", global_id)
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "Added host h1 to aggregate agg1" in line]
    assert f" INFO aggregates.host_aggregates.services [{response['X-OpenStack-Request-ID']} {global_id} " in line


def test_an_unknown_log_format_is_refused():
    with pytest.raises(RuntimeError, match="LOG_FORMAT must be one of text, json, not 'xml'"):
        request_context.logging_config("xml")
