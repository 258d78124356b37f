"""Engines the conformance suite runs on: one ``EngineCase`` per engine and interpreter.

MuJoCo on this interpreter and on Python 3.8 (``$UNISIM_PY38``) always; IsaacGym on the
real SDK wherever its worker interpreter is found (``python -m unisim doctor`` shows the
search), and on the SDK fake (``worker/src/unisim_worker/isaacgym_fake``, CPU pipeline) everywhere
else, so that CI runs the IsaacGym case with nothing skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import unisim
from unisim import isaacgym
from unisim.errors import SetupError

MODELS = Path(__file__).resolve().parent / "models"


@dataclass(frozen=True)
class EngineCase:
    """How to open a backend on one engine, and how exactly it stores state."""

    name: str
    engine: str
    python: str | None
    exact: bool  # float64 state (MuJoCo) or float32 (IsaacGym, PhysX)
    options: dict[str, Any] = field(default_factory=dict)

    def open(self, model: str, num_envs: int = 2, **kwargs: Any) -> unisim.Backend:
        return unisim.Backend(self.engine, MODELS / model, num_envs, python=self.python,
                              options=self.options, progress=False, **kwargs)

    def assert_same(self, actual: Any, expected: Any) -> None:
        """Equal as stored: bitwise in float64, to float32 rounding otherwise."""
        if self.exact:
            np.testing.assert_array_equal(actual, expected)
        else:
            np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-5)


def _mujoco(request: pytest.FixtureRequest) -> EngineCase:
    return EngineCase("mujoco", "mujoco", None, exact=True)


def _mujoco_py38(request: pytest.FixtureRequest) -> EngineCase:
    python = os.environ.get("UNISIM_PY38")
    if not python:
        if os.environ.get("UNISIM_REQUIRE_PY38"):
            pytest.fail("UNISIM_REQUIRE_PY38 is set but UNISIM_PY38 is empty: make test sets "
                        "it to .venv38/bin/python")
        pytest.skip("UNISIM_PY38 is not set (make test sets it to .venv38/bin/python)")
    return EngineCase("mujoco-py38", "mujoco", python, exact=True)


def _isaacgym(request: pytest.FixtureRequest) -> EngineCase:
    """The real SDK where discovery finds it; the SDK fake (CPU pipeline) elsewhere."""
    try:
        found = isaacgym.find_interpreter()
    except SetupError:
        fake = str(request.getfixturevalue("isaacgym_fake_python"))
        return EngineCase("isaacgym-fake", "isaacgym", fake, exact=False,
                          options={"pipeline": "cpu"})
    return EngineCase("isaacgym", "isaacgym", found.python, exact=False)


CASES = {"mujoco": _mujoco, "mujoco-py38": _mujoco_py38, "isaacgym": _isaacgym}


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> Iterator[EngineCase]:
    yield CASES[request.param](request)
    mine = f"unisim-{os.getpid()}-"
    leftover = [name for name in os.listdir("/dev/shm") if name.startswith(mine)]
    assert not leftover, f"shared memory left behind: {leftover}"
