"""Helpers shared by test modules."""

import threading

from django.db import connection


def fault(response, status, name):
    """Assert a Nova-style fault ``{name: {"code": status, "message": ...}}``; return the message."""
    assert response.status_code == status, response.content
    body = response.json()
    assert list(body) == [name]
    assert body[name]["code"] == status
    return body[name]["message"]


def run_together(*calls):
    """Start every call at the same moment in its own thread (each with its
    own database connection); return their results in order."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(index, call):
        try:
            barrier.wait()
            results[index] = call()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
