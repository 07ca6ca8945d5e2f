"""Helpers of the placement client's tests: a session that records what
the client sends, and a VCPU inventory."""

import requests


class RecordingSession(requests.Session):
    """A session that remembers what it sent and can run a hook before each PUT."""

    def __init__(self, before_put=None):
        super().__init__()
        self.sent = []
        self.before_put = before_put

    def request(self, method, url, **kwargs):
        if method == "PUT" and self.before_put:
            self.before_put()
        self.sent.append((method, url, kwargs))
        return super().request(method, url, **kwargs)


def vcpu(total):
    return {
        "VCPU": {
            "total": total,
            "reserved": 0,
            "min_unit": 1,
            "max_unit": total,
            "step_size": 1,
            "allocation_ratio": 4.0,
        }
    }
