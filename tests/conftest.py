"""Shared fixtures: the Python 3.8 worker interpreter, and the kit's leak guard on every test."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest
from hypothesis import settings

from unisim.channel import Channel
from unisim.process import WorkerProcess
from unisim_protocol import Command

# Property-based tests: 1,000 examples each in the suite; `make fuzz` (part of `make ci`)
# runs 10,000 with HYPOTHESIS_PROFILE=thorough.
settings.register_profile("suite", max_examples=1_000)
settings.register_profile("thorough", max_examples=10_000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


@pytest.fixture(autouse=True)
def _no_leaks(unisim_leak_guard: None) -> None:
    """Fail any test that leaves a worker process or a /dev/shm segment of ours behind."""


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt here, and in the Python children this test starts,
    as in an interactive shell. A shell starts a background job (`make test &`, nohup, a
    non-interactive CI script) with SIGINT ignored, which children inherit."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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


@pytest.fixture
def py38_channel(py38: str) -> Iterator[Channel]:
    """A bare Python 3.8 worker's channel, before HELLO; shut down and reaped afterwards."""
    process = WorkerProcess(py38)
    channel = Channel(process)
    try:
        yield channel
    finally:
        channel.request(Command.SHUTDOWN, {}, 10)
        process.close_pipes()
        process.reap(grace=5)
        channel.close()


@pytest.fixture(scope="session")
def isaacgym_fake_python(py38: str) -> str:
    """A Python 3.8 on which ``import isaacgym`` is the test kit's SDK fake: ``py38`` (with
    envs/worker-torch38.txt) in a cached venv, from ``unisim.testing.isaacgym_fake_python``."""
    from unisim.errors import SetupError
    from unisim.testing import isaacgym_fake_python as fake_python

    try:
        return fake_python(py38)
    except SetupError as exc:
        reason = f"the IsaacGym fake cannot run on {py38}: {exc}"
        if os.environ.get("UNISIM_REQUIRE_PY38"):
            pytest.fail(reason)
        pytest.skip(reason)
