"""Shared fixtures: the Python 3.8 worker interpreter, and the kit's leak guard on every test."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _no_leaks(unisim_leak_guard: None) -> None:
    """Fail any test that leaves a worker process or a /dev/shm segment of ours behind."""


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
