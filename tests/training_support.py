"""Shared by the task, integration and training tests (a plain module, not a conftest,
so that it composes with other test suites)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

SHM = Path("/dev/shm")


def python38() -> str:
    """The Python 3.8 worker interpreter from UNISIM_PY38 (``make test`` sets it)."""
    path = os.environ.get("UNISIM_PY38")
    if path:
        return path
    if os.environ.get("UNISIM_REQUIRE_PY38"):
        pytest.fail("UNISIM_REQUIRE_PY38 is set but UNISIM_PY38 is empty: build .venv38")
    pytest.skip("no Python 3.8 worker: set UNISIM_PY38 (make test does when .venv38 exists)")


def own_segments() -> set[str]:
    return {p.name for p in SHM.glob(f"unisim-{os.getpid()}-*")}


@pytest.fixture
def no_leaks() -> Iterator[None]:
    """Fails the test if it leaves a shared-memory segment of this process behind."""
    before = own_segments()
    yield
    assert own_segments() <= before, "test leaked /dev/shm segments"
