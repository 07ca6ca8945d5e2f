"""The console's read cache: answers to GET requests, shared by the threads
of the process, kept a few seconds (the console asks for
PLACEMENT_CONSOLE_CACHE_SECONDS), emptied by any write made through a client
of this process and whenever the placement settings change."""

import threading
import time
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

# (base url, path, version, params) -> (time.monotonic() when read, JSON body).
_read_cache: dict[tuple[Any, ...], tuple[float, Any]] = {}
_read_cache_lock = threading.Lock()
READ_CACHE_ENTRIES = 20000


def cached(key: tuple[Any, ...], max_age: float) -> Any | None:
    """The body read for ``key`` less than ``max_age`` seconds ago, if any."""
    found = _read_cache.get(key)
    if found is not None and time.monotonic() - found[0] < max_age:
        return found[1]
    return None


def remember(key: tuple[Any, ...], data: Any) -> None:
    now = time.monotonic()
    with _read_cache_lock:
        if len(_read_cache) >= READ_CACHE_ENTRIES:
            horizon = max(settings.PLACEMENT_CONSOLE_CACHE_SECONDS, 1)
            for stale in [k for k, (at, _data) in _read_cache.items() if now - at >= horizon]:
                del _read_cache[stale]
            if len(_read_cache) >= READ_CACHE_ENTRIES:
                _read_cache.clear()
        _read_cache[key] = (now, data)


def clear_read_cache() -> None:
    with _read_cache_lock:
        _read_cache.clear()


@receiver(setting_changed)
def _placement_setting_changed(setting: str, **kwargs: Any) -> None:
    if setting.startswith("PLACEMENT_") or setting in ("AUTH_STRATEGY", "PUBLIC_URL", "CORRAL_SERVICE"):
        clear_read_cache()
