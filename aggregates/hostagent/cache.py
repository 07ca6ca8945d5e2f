"""The agent's image cache: one file per image in a directory, named by the
image id, with a small JSON sidecar recording the verified hash.

Downloads stream into a temporary file in the same directory, hashed as they
arrive; only a file whose hash matches the image's ``os_hash_value`` is
renamed into place, so the cache never holds a partial or corrupt image."""

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
    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self.remove_leftovers()

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
        meta = {"id": image_id, "size": written, "os_hash_algo": algo, "os_hash_value": hash_value}
        meta["cached_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        meta_temp = self._meta_path(image_id).with_suffix(".json.tmp")
        meta_temp.write_text(json.dumps(meta))
        os.replace(meta_temp, self._meta_path(image_id))
        return written

    def listing(self) -> list[dict[str, Any]]:
        """What the cache holds: id, size, hash (as verified when stored), cached_at."""
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
            images.append(entry)
        return images
