"""CPU used by processes, read from /proc (Linux): the benchmarks that say
what each part of a run cost (web workers, PostgreSQL's backends, clients)."""

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids):
    """Seconds of CPU (user + system) the processes ``pids`` have used so far."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def children(pid):
    """The ids of the processes ``pid`` started (its direct children)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        return []


def postgres_backends(database):
    """The PostgreSQL backends serving ``database`` (their command line names it)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().decode(errors="replace")
        except OSError:
            continue
        if text.startswith("postgres:") and f" {database} " in text:
            found.append(int(cmdline.parent.name))
    return found


def machine_ticks():
    """(all, idle) clock ticks of the machine's CPUs so far (idle includes I/O wait)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields), fields[3] + fields[4]


class Usage:
    """Each group's CPU seconds between ``Usage(groups)`` and ``stop()``;
    ``groups`` maps a name to a callable giving its process ids (called at
    both ends: a process that started meanwhile counts whole, one that came
    and went meanwhile is missed)."""

    def __init__(self, groups):
        self.groups = groups
        self.before = {name: {pid: cpu_seconds([pid]) for pid in group()} for name, group in groups.items()}
        self.machine_before = machine_ticks()

    def stop(self):
        """({name: CPU seconds}, the share of the machine's CPU time that was busy)."""
        used = {}
        for name, group in self.groups.items():
            pids = set(self.before[name]) | set(group())
            used[name] = sum(max(0.0, cpu_seconds([pid]) - self.before[name].get(pid, 0.0)) for pid in pids)
        total, idle = (now - then for now, then in zip(machine_ticks(), self.machine_before, strict=True))
        return used, (1 - idle / total) if total else 0.0
