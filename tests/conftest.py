"""Shared fixtures: the Python 3.8 worker interpreter, and a guard against leaks."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SHM = Path("/dev/shm")


def _unisim_segments() -> set[str]:
    return {p.name for p in SHM.glob("unisim-*")}


def _children() -> set[int]:
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


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    """Fail a test that leaves a worker process or a /dev/shm segment of ours behind."""
    segments, children = _unisim_segments(), _children()
    yield
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        leaked_segments = _unisim_segments() - segments
        leaked_children = _children() - children
        if not leaked_segments and not leaked_children:
            return
        time.sleep(0.05)
    for pid in leaked_children:
        os.kill(pid, 9)
    for name in leaked_segments:
        (SHM / name).unlink(missing_ok=True)
    pytest.fail(f"test leaked worker processes {sorted(leaked_children)} "
                f"and shared-memory segments {sorted(leaked_segments)}")


@pytest.fixture(scope="session")
def py38() -> str:
    """The Python 3.8 worker interpreter (MuJoCo 3.2.x), from UNISIM_PY38 (set by `make test`)."""
    path = os.environ.get("UNISIM_PY38", "")
    if path and os.access(path, os.X_OK):
        return path
    reason = ("no Python 3.8 worker interpreter: set UNISIM_PY38 to a Python 3.8 with "
              "envs/worker-mujoco38.txt installed (`make test` builds .venv38 from pyenv's 3.8)")
    if os.environ.get("UNISIM_REQUIRE_PY38"):
        pytest.fail(reason)
    pytest.skip(reason)
