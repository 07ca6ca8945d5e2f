"""serve_demo's address: a taken port is said in one sentence, never a
traceback; with the default address the next free port is used."""

import socket

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from aggregates.management.commands import serve_demo


@pytest.fixture
def taken_port():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_a_taken_port_asked_for_is_refused_with_a_sentence(taken_port):
    with pytest.raises(CommandError) as refused:
        call_command("serve_demo", f"127.0.0.1:{taken_port}")
    assert f"Port {taken_port} on 127.0.0.1 is taken by another program" in str(refused.value)
    assert "manage.py serve_demo 127.0.0.1:8080" in str(refused.value)


def test_a_bad_address_is_refused(capsys):
    with pytest.raises(CommandError, match="is not \\[ADDR:\\]PORT"):
        call_command("serve_demo", "127.0.0.1:http")


def test_the_default_address_moves_to_the_next_free_port(taken_port, monkeypatch):
    monkeypatch.setattr(serve_demo, "DEFAULT_ADDR", f"127.0.0.1:{taken_port}")
    command = serve_demo.Command()
    addr = command._free_addr(None)
    host, port = addr.rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > taken_port
    with socket.socket() as probe:  # and it is free indeed
        probe.bind(("127.0.0.1", int(port)))
