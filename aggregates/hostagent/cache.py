"""The agent's image cache: one file per image in a directory, named by the
image id, with a small JSON sidecar recording the verified hash.

Downloads stream into a temporary file in the same directory, hashed as they
arrive; only a file whose hash matches the image's ``os_hash_value`` is
renamed into place, so the cache never holds a partial or corrupt image.

Past ``limit_bytes`` (the operator's ``--cache-limit``; 0: no limit) the
least recently used images are evicted, never a pinned one: Corral tells
the agent which images its aggregates pin (``PUT /cache/pins``, and
``"pinned": true`` on a cache request), kept in ``.pins.json`` so a
restarted agent still knows. An image is used when it is stored and when a
cache request finds it already there."""

import hashlib
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

CHUNK_SIZE = 1024 * 1024
_IMAGE_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TEMP_PREFIX = ".part-"
PINS_FILE = ".pins.json"


class CacheError(Exception):
    """An image could not be cached; the message says why."""


def valid_image_id(image_id: object) -> bool:
    return isinstance(image_id, str) and bool(_IMAGE_ID.match(image_id))


def file_hash(path: Path, algo: str = "sha512") -> str:
    digest = hashlib.new(algo)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK_SIZE), b""):
            digest.update(chunk)
    return digest.hexdigest()


class ImageCache:
    def __init__(self, directory: str | os.PathLike[str], limit_bytes: int = 0):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.limit_bytes = max(0, int(limit_bytes))
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._pins_guard = threading.Lock()
        self._pins = self._read_pins()
        self.remove_leftovers()

    # --- pins and eviction ---------------------------------------------------------------

    def _read_pins(self) -> set[str]:
        try:
            pins = json.loads((self.directory / PINS_FILE).read_text())
        except (OSError, ValueError):
            return set()
        return {p for p in pins if valid_image_id(p)} if isinstance(pins, list) else set()

    def _write_pins(self) -> None:
        temp = self.directory / (PINS_FILE + ".tmp")
        temp.write_text(json.dumps(sorted(self._pins)))
        os.replace(temp, self.directory / PINS_FILE)

    def pins(self) -> set[str]:
        with self._pins_guard:
            return set(self._pins)

    def set_pins(self, image_ids: Iterable[str]) -> None:
        """The whole set of pinned images (any other may be evicted)."""
        with self._pins_guard:
            self._pins = {i for i in image_ids if valid_image_id(i)}
            self._write_pins()

    def add_pins(self, image_ids: Iterable[str]) -> None:
        with self._pins_guard:
            self._pins |= {i for i in image_ids if valid_image_id(i)}
            self._write_pins()

    def touch(self, image_id: str) -> None:
        """Mark the image used now (its place in the least-recently-used order)."""
        meta_path = self._meta_path(image_id)
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            meta = {"id": image_id}
        meta["last_used"] = time.time()
        temp = meta_path.with_suffix(".json.tmp")
        temp.write_text(json.dumps(meta))
        os.replace(temp, meta_path)

    def _last_used(self, path: Path) -> float:
        try:
            return float(json.loads(self._meta_path(path.name).read_text())["last_used"])
        except (OSError, ValueError, KeyError, TypeError):
            try:
                return path.stat().st_mtime
            except OSError:
                return 0.0

    def evict(self, keep: Iterable[str] = ()) -> list[str]:
        """Past ``limit_bytes``, remove the least recently used images that
        are neither pinned nor in ``keep`` (nor being downloaded) until the
        cache fits; the ids removed."""
        if not self.limit_bytes:
            return []
        kept = self.pins() | set(keep)
        sizes: dict[str, int] = {}
        files = []
        for path in self.directory.iterdir():
            if not valid_image_id(path.name):
                continue
            try:
                sizes[path.name] = path.stat().st_size
            except OSError:
                continue  # removed meanwhile
            files.append(path)
        total = sum(sizes.values())
        evicted: list[str] = []
        for path in sorted((p for p in files if p.name not in kept), key=self._last_used):
            if total <= self.limit_bytes:
                break
            lock = self.lock(path.name)
            if not lock.acquire(blocking=False):
                continue  # being cached right now
            try:
                path.unlink(missing_ok=True)
                self._meta_path(path.name).unlink(missing_ok=True)
            finally:
                lock.release()
            total -= sizes[path.name]
            evicted.append(path.name)
        return evicted

    def remove_leftovers(self) -> None:
        """Temporary files of downloads cut short (the agent was killed) go."""
        for leftover in self.directory.glob(TEMP_PREFIX + "*"):
            leftover.unlink(missing_ok=True)

    def lock(self, image_id: str) -> threading.Lock:
        """One download of an image at a time in this agent."""
        with self._locks_guard:
            return self._locks.setdefault(image_id, threading.Lock())

    def path(self, image_id: str) -> Path:
        if not valid_image_id(image_id):
            raise CacheError(f"Invalid image id {image_id!r}")
        return self.directory / image_id

    def _meta_path(self, image_id: str) -> Path:
        return self.directory / f"{image_id}.json"

    def holds(self, image_id: str, algo: str, hash_value: str) -> bool:
        """The cache holds this image with this hash (checked on the file's bytes)."""
        path = self.path(image_id)
        if not path.is_file():
            return False
        try:
            return file_hash(path, algo) == hash_value
        except (OSError, ValueError):
            return False

    def store(self, image_id: str, chunks: Iterable[bytes], algo: str, hash_value: str) -> int:
        """Write ``chunks`` to a temporary file, check the hash, rename into
        place. On any failure the temporary file is removed and nothing
        replaces what the cache held. Returns the number of bytes written."""
        target = self.path(image_id)
        try:
            digest = hashlib.new(algo)
        except ValueError as exc:
            raise CacheError(f"Unsupported hash algorithm {algo!r}") from exc
        handle = tempfile.NamedTemporaryFile(dir=self.directory, prefix=TEMP_PREFIX + image_id + "-", delete=False)
        temp = Path(handle.name)
        written = 0
        try:
            with handle:
                for chunk in chunks:
                    digest.update(chunk)
                    handle.write(chunk)
                    written += len(chunk)
                handle.flush()
                os.fsync(handle.fileno())
            actual = digest.hexdigest()
            if actual != hash_value:
                raise CacheError(
                    f"Checksum mismatch for image {image_id}: {algo} of the {written} bytes downloaded is "
                    f"{actual[:16]}..., the image's os_hash_value is {hash_value[:16]}..."
                )
            os.replace(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        meta: dict[str, Any] = {"id": image_id, "size": written, "os_hash_algo": algo, "os_hash_value": hash_value}
        meta["cached_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        meta["last_used"] = time.time()
        meta_temp = self._meta_path(image_id).with_suffix(".json.tmp")
        meta_temp.write_text(json.dumps(meta))
        os.replace(meta_temp, self._meta_path(image_id))
        return written

    def listing(self) -> list[dict[str, Any]]:
        """What the cache holds: id, size, hash (as verified when stored),
        cached_at, last_used_at, and whether it is pinned."""
        pins = self.pins()
        images = []
        for path in sorted(self.directory.iterdir()):
            if not valid_image_id(path.name) or not path.is_file():
                continue
            entry: dict[str, Any] = {"id": path.name, "size": path.stat().st_size}
            try:
                meta = json.loads(self._meta_path(path.name).read_text())
                for key in ("os_hash_algo", "os_hash_value", "cached_at"):
                    entry[key] = meta.get(key)
            except (OSError, ValueError):
                entry.update(os_hash_algo=None, os_hash_value=None, cached_at=None)
            last_used = self._last_used(path)
            entry["last_used_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(last_used)) if last_used else None
            entry["pinned"] = path.name in pins
            images.append(entry)
        return images
