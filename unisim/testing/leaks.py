"""Detect worker processes, shared memory and descriptors a block of code leaves behind."""

from __future__ import annotations

import gc
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import LeakError
from ..process import open_pipes
from ..slots import PREFIX, SHM_DIR


def segments() -> set[str]:
    """Our unisim segments: those whose owner is this process, a live descendant or dead.

    Segments of other live processes (a test run in another checkout) are not ours to count
    or unlink: ``/dev/shm`` is shared by every run on the machine.
    """
    mine = {os.getpid(), *descendants()}
    found = set()
    for path in SHM_DIR.glob(f"{PREFIX}*"):
        owner = path.name[len(PREFIX):].split("-", 1)[0]
        if owner.isdigit() and (int(owner) in mine or not Path(f"/proc/{owner}").exists()):
            found.add(path.name)
    return found


def descendants() -> set[int]:
    """Live processes below this one (a host started by a test, and its workers)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found: set[int] = set()
    frontier = {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def children() -> set[int]:
    """Live (non-zombie) direct children of this process."""
    me = os.getpid()
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def descriptors() -> set[str]:
    """Descriptors a backend opens and must close: worker pipes and unisim shared memory.

    (Other libraries' pipes, JAX's say, are none of our business.)
    """
    pipes = open_pipes()
    found = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if int(fd.name) in pipes or f"/{PREFIX}" in target:
            found.add(f"{fd.name} -> {target}")
    return found


@contextmanager
def leak_guard(grace: float = 3.0) -> Iterator[None]:
    """Raise ``LeakError`` if the block leaves new children, segments or descriptors.

    Leaks are checked for up to ``grace`` seconds (exits take a moment). Leaked processes
    and segments are killed and unlinked before raising, so one leak does not cascade.
    """
    before = segments(), children(), descriptors()
    yield
    deadline = time.monotonic() + grace
    while True:
        gc.collect()  # garbage in reference cycles (exceptions and their frames) is no leak
        new_segments = segments() - before[0]
        new_children = children() - before[1]
        new_fds = descriptors() - before[2]
        if not (new_segments or new_children or new_fds) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if not (new_segments or new_children or new_fds):
        return
    for pid in new_children:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for name in new_segments:
        (SHM_DIR / name).unlink(missing_ok=True)
    raise LeakError(f"leaked worker processes {sorted(new_children)}, shared-memory "
                    f"segments {sorted(new_segments)} and descriptors {sorted(new_fds)}")
