"""What the host has, as the agent registers it: vCPUs, memory, disk."""

import os
import shutil
from pathlib import Path


def detect_vcpus() -> int:
    return os.cpu_count() or 1


def detect_memory_mb() -> int:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    return pages * page_size // (1024 * 1024)


def detect_disk_gb(directory: str | os.PathLike[str]) -> int:
    """The size of the file system holding ``directory`` (the image cache)."""
    return shutil.disk_usage(Path(directory)).total // (1024**3)
