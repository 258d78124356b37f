"""Detect worker processes and shared-memory segments a block of code leaves behind."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..slots import PREFIX, SHM_DIR


class LeakError(AssertionError):
    """Code left a worker process or a unisim shared-memory segment behind."""


def segments() -> set[str]:
    return {p.name for p in SHM_DIR.glob(f"{PREFIX}*")}


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


@contextmanager
def leak_guard(grace: float = 3.0) -> Iterator[None]:
    """Raise ``LeakError`` if the block leaves new children or segments after ``grace`` s.

    What leaked is killed and unlinked before raising, so one leak does not cascade.
    """
    before_segments, before_children = segments(), children()
    yield
    deadline = time.monotonic() + grace
    while True:
        new_segments = segments() - before_segments
        new_children = children() - before_children
        if not (new_segments or new_children) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if not (new_segments or new_children):
        return
    for pid in new_children:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for name in new_segments:
        (SHM_DIR / name).unlink(missing_ok=True)
    raise LeakError(f"leaked worker processes {sorted(new_children)} and shared-memory "
                    f"segments {sorted(new_segments)}")
