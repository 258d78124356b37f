"""Test kit: a real worker process with predictable fake physics that fails on request.

The mock engine speaks the real protocol over real pipes and shared memory, on any
interpreter, without MuJoCo. Its dynamics, per env and substep, are::

    qvel[:nu] += ctrl * dt;  qpos[:nv] += qvel * dt

so a test can predict every number. ``Fault`` scripts crashes, hangs, slow replies,
remote errors and stream corruption by command and call count. The pytest plugin
(``unisim.testing.pytest_plugin``, registered automatically) adds the fixtures
``unisim_mock`` and ``unisim_leak_guard``.

``isaacgym_fake_python(python)`` gives an interpreter on which ``import isaacgym`` is a
behavioural fake of the IsaacGym SDK (gymapi, gymtorch) on MuJoCo, for running IsaacGym
code in CI without the SDK or a GPU (docs/isaacgym.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..backend import Backend
from ..errors import LeakError
from ..physics_draws import by_label
from .faults import Fault
from .isaacgym_fake_env import isaacgym_fake_python
from .leaks import leak_guard

__all__ = ["Fault", "LeakError", "applied_physics", "isaacgym_fake_python", "leak_guard",
           "mock_backend"]


def mock_backend(num_envs: int = 4, *, model: str | Path | None = None,
                 keyframe: str | None = None, nq: int = 2, nv: int | None = None,
                 nu: int | None = None, timestep: float = 0.01,
                 joint_names: Sequence[str] = (), actuator_names: Sequence[str] = (),
                 body_names: Sequence[str] = (), geom_names: Sequence[str] = (),
                 faults: Sequence[Fault] = (),
                 **backend_options: Any) -> Backend:
    """A real ``Backend`` over the mock engine.

    The layout is ``nq``/``nv``/``nu`` and the names given, or that of the MJCF ``model``
    (read as XML; MuJoCo need not be installed). ``backend_options`` go to ``Backend``
    (``python=`` runs the worker on another interpreter, e.g. a Python 3.8;
    ``randomization=`` a ``PhysicsRandomization``, whose application ``applied_physics``
    reads back).
    """
    nv = nq if nv is None else nv
    options = {"nq": nq, "nv": nv, "nu": nv if nu is None else nu, "timestep": timestep,
               "joint_names": list(joint_names), "actuator_names": list(actuator_names),
               "body_names": list(body_names), "geom_names": list(geom_names),
               "faults": [f.to_wire() for f in faults]}
    return Backend("mock", model=model, num_envs=num_envs, keyframe=keyframe,
                   options=options, **backend_options)


def applied_physics(sim: Backend) -> tuple[dict[str, Any], Any]:
    """What a mock backend's engine applied: each parameter's values by label as the
    worker last received them, and how many times each env's were applied."""
    views = sim.state()
    if sim.randomization is None or "mock_physics" not in views:
        raise ValueError("applied_physics needs a mock_backend built with randomization=")
    return (by_label(sim.randomization, views["mock_physics"]),
            views["mock_physics_applied"].copy())
