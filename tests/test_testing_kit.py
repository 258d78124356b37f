"""The test kit's own guarantees: its leak guard catches real leaks, and only ours."""

from __future__ import annotations

import os
import sys

import pytest

from unisim.process import WorkerProcess
from unisim.testing import Fault, LeakError, leak_guard, mock_backend


def test_leak_guard_catches_an_unclosed_backend() -> None:
    with pytest.raises(LeakError, match=r"leaked worker processes \[\d+\]"):
        with leak_guard(grace=0.2):
            sim = mock_backend(2)  # still referenced, never closed: its worker lives on
    sim.close()  # (the guard killed the worker; closing releases the rest)


def test_leak_guard_catches_worker_pipes_left_open() -> None:
    with pytest.raises(LeakError, match="pipe:"):
        with leak_guard(grace=0.2):
            process = WorkerProcess(sys.executable)
            process.kill()
            process.reap()  # reaped, but its pipes were never closed
    process.close_pipes()


def test_leak_guard_ignores_other_libraries_pipes() -> None:
    with leak_guard(grace=0.2):
        r, w = os.pipe()  # someone else's, e.g. JAX's
    os.close(r)
    os.close(w)


def test_faults_name_unknown_commands() -> None:
    with pytest.raises(ValueError, match="unknown command 'STPE'"):
        Fault.hang("STPE")
