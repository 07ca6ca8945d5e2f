"""Image data on disk: one file per image under ``IMAGE_STORE_DIR``, named by
the image id. An upload is written to a temporary file in the same directory
(``.<id>.<random>.part``), hashed as it streams, flushed to disk and then
renamed into place, so that a reader sees either the whole file or none."""

import errno
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from uuid import UUID

from django.conf import settings

from aggregates.errors import ServiceError

CHUNK_SIZE = 64 * 1024
HASH_ALGO = "sha512"  # Glance's default [DEFAULT] hashing_algorithm
TEMP_SUFFIX = ".part"


class TooLarge(ServiceError):
    """More data than IMAGE_MAX_BYTES, or no room left on the store."""

    status = 413


class Interrupted(ServiceError):
    """The upload's body ended before its announced length (the client went away)."""

    status = 400


def chunks_of(read: Callable[[int], bytes], length: int | None) -> Iterator[bytes]:
    """A request body as chunks of at most CHUNK_SIZE bytes, from ``read(n)``:
    exactly ``length`` bytes (Interrupted if it ends sooner), or, when the
    length is unknown (a chunked body), up to the end."""
    if length is None:
        while chunk := read(CHUNK_SIZE):
            yield chunk
        return
    received = 0
    while received < length:
        chunk = read(min(CHUNK_SIZE, length - received))
        if not chunk:
            raise Interrupted(
                f"The image upload was interrupted: the request body ended after {received} of {length} bytes."
            )
        received += len(chunk)
        yield chunk


def store_dir() -> Path:
    path = Path(settings.IMAGE_STORE_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def path_of(image_id: UUID | str) -> Path:
    return store_dir() / str(UUID(str(image_id)))


@dataclass
class StagedData:
    """A complete upload in its temporary file, not yet in place."""

    temp_path: Path
    size: int
    checksum: str
    os_hash_algo: str
    os_hash_value: str

    def commit(self, image_id: UUID | str) -> Path:
        """Move the data into place (atomic within one file system)."""
        final = path_of(image_id)
        os.replace(self.temp_path, final)
        return final

    def discard(self) -> None:
        self.temp_path.unlink(missing_ok=True)


def stage(image_id: UUID | str, chunks: Iterable[bytes], max_bytes: int) -> StagedData:
    """Write ``chunks`` to a temporary file, hashing them as they pass; at most
    ``max_bytes`` (else TooLarge). Whatever goes wrong, the temporary file is
    removed before the error propagates."""
    fd, name = tempfile.mkstemp(prefix=f".{UUID(str(image_id))}.", suffix=TEMP_SUFFIX, dir=store_dir())
    temp_path = Path(name)
    md5 = hashlib.md5(usedforsecurity=False)
    secure = hashlib.new(HASH_ALGO)
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                if not chunk:
                    continue
                size += len(chunk)
                if size > max_bytes:
                    raise TooLarge("The incoming image is too large: The provided image is too large.")
                md5.update(chunk)
                secure.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
    except OSError as exc:
        temp_path.unlink(missing_ok=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise TooLarge("Image storage media is full: There is not enough disk space on the image storage media.")
        raise
    except BaseException:
        temp_path.unlink(missing_ok=True)
        raise
    return StagedData(temp_path, size, md5.hexdigest(), HASH_ALGO, secure.hexdigest())


def open_data(image_id: UUID | str) -> BinaryIO | None:
    """The image's data opened for reading, or None when there is none. An
    open file stays readable even if the image is deleted meanwhile."""
    try:
        return open(path_of(image_id), "rb")  # noqa: SIM115 - the caller closes it
    except FileNotFoundError:
        return None


def read_range(handle: BinaryIO, start: int, length: int) -> Iterator[bytes]:
    """``length`` bytes from ``start``, in chunks; closes ``handle`` at the end."""
    try:
        handle.seek(start)
        left = length
        while left > 0:
            chunk = handle.read(min(CHUNK_SIZE, left))
            if not chunk:
                break
            left -= len(chunk)
            yield chunk
    finally:
        handle.close()


def remove(image_id: UUID | str) -> None:
    path_of(image_id).unlink(missing_ok=True)


def temp_files(image_id: UUID | str) -> list[Path]:
    """Temporary files left by uploads of ``image_id`` (tests and clean-ups)."""
    return sorted(store_dir().glob(f".{UUID(str(image_id))}.*{TEMP_SUFFIX}"))
