"""Request ids: the log records a test causes, as the configured handler
sees them (with the request context filter), and what placement is sent."""

import logging
import uuid

import pytest

from aggregates.placement_client import inprocess
from config.request_context import ContextFilter


class Records(logging.Handler):
    """Every record logged anywhere while the test runs, with the request
    context filter of settings.LOGGING's handler applied."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.addFilter(ContextFilter())
        self.records = []

    def emit(self, record):
        self.records.append(record)

    def with_message(self, text):
        return [record for record in self.records if text in record.getMessage()]

    def of_logger(self, name):
        return [record for record in self.records if record.name == name]


@pytest.fixture
def log_records():
    root = logging.getLogger()
    handler, saved_level = Records(), root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield handler
    root.removeHandler(handler)
    root.setLevel(saved_level)


@pytest.fixture
def global_id():
    return f"req-{uuid.uuid4()}"


@pytest.fixture
def placement_headers(monkeypatch):
    """The headers of every request the placement client sends to Corral's
    own placement in process (the real transport still runs it)."""
    seen = []
    real = inprocess.call_placement

    def spy(request):
        seen.append(dict(request.headers))
        return real(request)

    monkeypatch.setattr(inprocess, "call_placement", spy)
    return seen
