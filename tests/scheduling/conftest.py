import pytest

from tests.cloud import Cloud, own_placement


@pytest.fixture
def cloud(transactional_db, settings, monkeypatch, system, make_host):
    own_placement(settings, monkeypatch)
    return Cloud(system, make_host)
