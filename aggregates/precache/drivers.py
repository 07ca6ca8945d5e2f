"""Cache drivers: how an image gets into a host's local image cache.

The interface (what the job runner calls, from a worker thread of its own,
one host at a time per thread):

``CacheDriver.cache(host, images, timeout, on_image_done) -> list[ImageResult]``
    Make every image of ``images`` present in ``host``'s cache, one after the
    other, and return one ``ImageResult`` per image, in order. Call
    ``on_image_done(result)`` as soon as each image is finished (the job
    shows per-image progress from it). Give up within ``timeout`` seconds
    (the runner marks a host that has not answered by then ``error`` and
    stops waiting for it; a late answer is ignored). An image is ``cached``
    (downloaded now), ``existing`` (already there with the right
    ``os_hash_value``) or ``error`` (with a message). A driver never touches
    the database: it gets everything it needs in ``HostTarget`` and
    ``ImageToCache``. Raising an exception marks the host's unfinished
    images ``error`` with its message.

``CacheDriver.cached_images(host) -> list[str]``
    The image ids present in ``host``'s cache (for the console's "where it
    is cached"). Raise ``DriverUnavailable`` when the host cannot be asked.

``CacheDriver.set_pinned(host, image_ids)``
    Tell ``host``'s cache which images it must keep (the pinned images of
    every aggregate the host is in, the whole set: any other image may be
    evicted). ``ImageToCache.pinned`` marks an image pinned as it is cached,
    before the next full set arrives. Raise ``DriverUnavailable`` when the
    host cannot be told.

Drivers are chosen by the ``CACHE_DRIVER`` setting through ``DRIVERS``, a
table of dotted paths resolved lazily with ``import_string``: ``inprocess``
(below; a simulated host cache under ``HOST_CACHE_DIR/<host>/``, streaming
from Corral's image store) and ``agent`` (``aggregates.precache.agent_driver``,
HTTP to the host agent at the address the host registered; agents download
the data from Corral's image API at ``download_url``)."""

import hashlib
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from aggregates.errors import ServiceError
from aggregates.images import storage

CACHED = "cached"
EXISTING = "existing"
ERROR = "error"

DRIVERS = {
    "inprocess": "aggregates.precache.drivers.InProcessDriver",
    "agent": "aggregates.precache.agent_driver.AgentDriver",
}


class DriverUnavailable(ServiceError):
    status = 503


@dataclass(frozen=True)
class HostTarget:
    """A member host to cache on: its service host name, the URL its agent
    registered (``ComputeNode.agent_url``; "" when it gave none) and its
    compute node's ``host_ip`` (None when it gave none)."""

    host: str
    address: str | None = None
    agent_url: str = ""


@dataclass(frozen=True)
class ImageToCache:
    id: str
    name: str | None = None
    size: int | None = None
    os_hash_algo: str | None = None
    os_hash_value: str | None = None
    # Path of the image data on Corral's image API ("/image/v2/images/<id>/file").
    download_path: str = ""
    # One of the aggregate's pinned images: the host's cache must keep it (never evict it).
    pinned: bool = False


@dataclass
class ImageResult:
    image_id: str
    status: str
    error: str = ""
    bytes: int | None = None
    seconds: float | None = None


@dataclass
class DriverInfo:
    name: str
    path: str
    extra: dict[str, str] = field(default_factory=dict)


class CacheDriver(Protocol):
    def cache(
        self,
        host: HostTarget,
        images: list[ImageToCache],
        timeout: float,
        on_image_done: Callable[[ImageResult], None],
    ) -> list[ImageResult]: ...

    def cached_images(self, host: HostTarget) -> list[str]: ...

    def set_pinned(self, host: HostTarget, image_ids: list[str]) -> None: ...


def load_driver(name: str | None = None) -> CacheDriver:
    """The driver named ``name`` (default: the CACHE_DRIVER setting), or
    DriverUnavailable with the reason."""
    name = name or settings.CACHE_DRIVER
    path = DRIVERS.get(name)
    if path is None:
        raise DriverUnavailable(f"unknown cache driver {name!r} (known: {', '.join(sorted(DRIVERS))})")
    try:
        driver_class = import_string(path)
    except ImportError as exc:
        raise DriverUnavailable(f"{name} driver not available: {exc}") from exc
    driver: CacheDriver = driver_class()
    return driver


_SAFE_HOST = re.compile(r"^[A-Za-z0-9_.@-]+$")


def host_cache_dir(host: str) -> Path:
    """The simulated cache directory of ``host`` (host names that are not
    plain file names are hex-encoded)."""
    name = host if _SAFE_HOST.match(host) and host not in (".", "..") else "x-" + host.encode().hex()
    return Path(settings.HOST_CACHE_DIR) / name


class TimedOut(Exception):
    pass


def _file_hash(path: Path, algo: str) -> str:
    digest = hashlib.new(algo)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(storage.CHUNK_SIZE), b""):
            digest.update(chunk)
    return digest.hexdigest()


class InProcessDriver:
    """A host's cache simulated on this machine: ``HOST_CACHE_DIR/<host>/<image id>``,
    copied from the image store by streaming (temporary file, hash checked
    against ``os_hash_value``, then renamed into place). HOST_CACHE_SIMULATED_DELAY
    seconds are spent before each image (a slow link, for demos and fault tests)."""

    def cache(
        self,
        host: HostTarget,
        images: list[ImageToCache],
        timeout: float,
        on_image_done: Callable[[ImageResult], None],
    ) -> list[ImageResult]:
        deadline = time.monotonic() + timeout
        delay = float(getattr(settings, "HOST_CACHE_SIMULATED_DELAY", 0) or 0)
        results = []
        for image in images:
            if delay:  # a simulated slow link (demo, fault tests), bounded by the timeout
                time.sleep(max(0.0, min(delay, deadline - time.monotonic())))
            result = self._cache_one(host, image, deadline)
            on_image_done(result)
            results.append(result)
        return results

    def cached_images(self, host: HostTarget) -> list[str]:
        directory = host_cache_dir(host.host)
        if not directory.is_dir():
            return []
        return sorted(p.name for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))

    def set_pinned(self, host: HostTarget, image_ids: list[str]) -> None:
        """The simulated cache never evicts: nothing to keep."""
        return None

    def _cache_one(self, host: HostTarget, image: ImageToCache, deadline: float) -> ImageResult:
        started = time.monotonic()
        algo = image.os_hash_algo or storage.HASH_ALGO
        directory = host_cache_dir(host.host)
        target = directory / image.id
        try:
            directory.mkdir(parents=True, exist_ok=True)
            if target.exists() and image.os_hash_value and _file_hash(target, algo) == image.os_hash_value:
                return ImageResult(image.id, EXISTING, bytes=target.stat().st_size, seconds=time.monotonic() - started)
            source = storage.open_data(image.id)
            if source is None:
                return ImageResult(image.id, ERROR, "the image has no data in the image store")
            size = self._copy(source, directory, target, image, algo, deadline)
            return ImageResult(image.id, CACHED, bytes=size, seconds=round(time.monotonic() - started, 3))
        except TimedOut:
            return ImageResult(image.id, ERROR, "timed out", seconds=round(time.monotonic() - started, 3))
        except (OSError, ValueError) as exc:
            return ImageResult(image.id, ERROR, str(exc), seconds=round(time.monotonic() - started, 3))

    def _copy(
        self, source: BinaryIO, directory: Path, target: Path, image: ImageToCache, algo: str, deadline: float
    ) -> int:
        fd, name = tempfile.mkstemp(prefix=f".{image.id}.", suffix=".part", dir=directory)
        temp = Path(name)
        digest = hashlib.new(algo)
        size = 0
        try:
            with source, os.fdopen(fd, "wb") as out:
                for chunk in iter(lambda: source.read(storage.CHUNK_SIZE), b""):
                    if time.monotonic() > deadline:
                        raise TimedOut()
                    digest.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
            if image.os_hash_value and digest.hexdigest() != image.os_hash_value:
                raise ValueError(f"{algo} mismatch: the data does not match the image's os_hash_value")
            os.replace(temp, target)
        finally:
            temp.unlink(missing_ok=True)
        return size
