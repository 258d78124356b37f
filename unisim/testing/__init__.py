"""Test kit: a real worker process with predictable fake physics that fails on request.

The mock engine speaks the real protocol over real pipes and shared memory, on any
interpreter, without MuJoCo. Its dynamics, per env and substep, are::

    qvel[:nu] += ctrl * dt;  qpos[:nv] += qvel * dt

so a test can predict every number. ``Fault`` scripts crashes, hangs, slow replies,
remote errors and stream corruption by command and call count. The pytest plugin
(``unisim.testing.pytest_plugin``, registered automatically) adds the fixtures
``unisim_mock`` and ``unisim_leak_guard``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..backend import Backend
from ..errors import LeakError
from .faults import Fault
from .leaks import leak_guard

__all__ = ["Fault", "LeakError", "leak_guard", "mock_backend"]


def mock_backend(num_envs: int = 4, *, model: str | Path | None = None,
                 keyframe: str | None = None, nq: int = 2, nv: int | None = None,
                 nu: int | None = None, timestep: float = 0.01,
                 joint_names: Sequence[str] = (), actuator_names: Sequence[str] = (),
                 body_names: Sequence[str] = (), faults: Sequence[Fault] = (),
                 **backend_options: Any) -> Backend:
    """A real ``Backend`` over the mock engine.

    The layout is ``nq``/``nv``/``nu`` and the names given, or that of the MJCF ``model``
    (read as XML; MuJoCo need not be installed). ``backend_options`` go to ``Backend``
    (``python=`` runs the worker on another interpreter, e.g. a Python 3.8).
    """
    nv = nq if nv is None else nv
    options = {"nq": nq, "nv": nv, "nu": nv if nu is None else nu, "timestep": timestep,
               "joint_names": list(joint_names), "actuator_names": list(actuator_names),
               "body_names": list(body_names), "faults": [f.to_wire() for f in faults]}
    return Backend("mock", model=model, num_envs=num_envs, keyframe=keyframe,
                   options=options, **backend_options)
