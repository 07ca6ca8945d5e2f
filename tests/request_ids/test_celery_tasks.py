"""Request ids through Celery: publishing a task puts the current ids in
its message headers (before_task_publish), and the task runs with them as
its context (task_prerun), which is undone when it ends (task_postrun):
its log lines carry them, whether a worker runs the message or the task
runs eagerly in the process that queued it."""

import logging
import re
import uuid

import pytest
from celery.worker.request import Request
from kombu import Connection

from aggregates.host_aggregates import services as aggregates
from aggregates.mirroring import tasks
from aggregates.mirroring.models import PlacementMirrorRequest
from config import celery_app, request_context
from config.celery import GLOBAL_REQUEST_ID_HEADER, REQUEST_ID_HEADER

LOCAL_ID = re.compile(r"req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
log = logging.getLogger("tests.request_ids.task")


@celery_app.task(name="tests.request_ids.current_ids")
def current_ids():
    """What a task sees as its context, and a log line of its own."""
    log.info("the task runs")
    context = request_context.current()
    return [context.request_id, context.global_request_id, context.route]


def ids():
    return f"req-{uuid.uuid4()}", f"req-{uuid.uuid4()}"


@pytest.fixture
def broker_mode():
    """send_task publishes (the memory transport stands for the broker); the
    autouse isolated_side_effects fixture sets eager mode back."""
    celery_app.conf.task_always_eager = False


def test_a_published_task_carries_the_ids_in_its_headers_to_the_worker(broker_mode, log_records):
    local_id, global_id = ids()
    with Connection("memory://") as connection:
        producer = celery_app.amqp.Producer(connection)
        context = request_context.RequestContext(request_id=local_id, global_request_id=global_id)
        with request_context.bound(context):
            celery_app.send_task("tests.request_ids.current_ids", producer=producer)
        message = connection.SimpleQueue("celery").get(timeout=1)

        assert message.headers[REQUEST_ID_HEADER] == local_id
        assert message.headers[GLOBAL_REQUEST_ID_HEADER] == global_id
        # A worker's request for that message (the worker's own code path, here in this process).
        seen = Request(message, app=celery_app, task=current_ids).execute()

    assert seen == [local_id, global_id, "task tests.request_ids.current_ids"]
    (line,) = log_records.with_message("the task runs")
    assert (line.request_id, line.global_request_id) == (local_id, global_id)
    assert request_context.current() == request_context.RequestContext()  # undone after the task


def test_a_message_without_ids_runs_under_a_new_request_id(broker_mode):
    with Connection("memory://") as connection:
        celery_app.send_task("tests.request_ids.current_ids", producer=celery_app.amqp.Producer(connection))
        message = connection.SimpleQueue("celery").get(timeout=1)
        assert REQUEST_ID_HEADER not in message.headers
        request_id, global_id, _ = Request(message, app=celery_app, task=current_ids).execute()
    assert LOCAL_ID.fullmatch(request_id) and global_id == ""


def test_an_eager_task_reads_the_ids_of_its_headers():
    local_id, global_id = ids()
    result = current_ids.apply_async(headers={REQUEST_ID_HEADER: local_id, GLOBAL_REQUEST_ID_HEADER: global_id})
    assert result.get() == [local_id, global_id, "task tests.request_ids.current_ids"]


def test_a_global_id_of_another_form_in_the_headers_is_ignored():
    local_id, _ = ids()
    result = current_ids.apply_async(headers={REQUEST_ID_HEADER: local_id, GLOBAL_REQUEST_ID_HEADER: "nonsense"})
    assert result.get()[:2] == [local_id, ""]


def test_an_eager_task_keeps_the_ids_of_the_work_that_ran_it_and_gives_them_back():
    local_id, global_id = ids()
    outer = request_context.RequestContext(request_id=local_id, global_request_id=global_id, route="GET /x")
    with request_context.bound(outer):
        assert current_ids.apply_async().get() == [local_id, global_id, "task tests.request_ids.current_ids"]
        assert request_context.current() == outer


@pytest.mark.django_db
def test_the_log_lines_of_a_mirroring_task_carry_the_ids_of_its_headers(system, make_host, log_records):
    make_host("h1")
    aggregate = aggregates.create_aggregate(system, "agg1")
    aggregates.add_host(system, aggregate.id, "h1")  # never committed: the row waits for its task
    row = PlacementMirrorRequest.objects.get()
    assert row.request_id == ""  # written outside any request
    log_records.records.clear()
    local_id, global_id = ids()

    tasks.apply_mirror_request.apply_async(
        args=(row.pk,), headers={REQUEST_ID_HEADER: local_id, GLOBAL_REQUEST_ID_HEADER: global_id}
    )

    # Placement is not reachable in this test: the applier's warning names the row and carries the ids.
    (failed,) = log_records.with_message("Placement mirroring failed adding host h1 to aggregate agg1")
    assert (failed.levelname, failed.request_id, failed.global_request_id) == ("WARNING", local_id, global_id)
    assert failed.route == "task corral.mirroring.apply_mirror_request"
