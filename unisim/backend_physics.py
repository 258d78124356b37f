"""The physics-randomisation calls of ``Backend`` (physics_randomization.py, physics_draws.py),
kept beside it: they use its lock, stepping, pool and plane, declared here for mypy."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

import unisim.protocol as protocol

from .arrays import env_rows
from .physics_draws import PhysicsDraws
from .planes import DataPlane
from .pool import WorkerPool
from .stepping import Stepping

Command = protocol.Command


class PhysicsMethods:
    _lock: threading.Lock
    _physics: PhysicsDraws | None
    _stepping: Stepping
    _pool: WorkerPool
    _plane: DataPlane
    _reset_mask: Any
    num_envs: int
    timeout: float
    _check_open: Callable[[], None]

    def randomize(self, env_ids: Any = None) -> None:
        """Draw new physics parameters for ``env_ids`` (all if None) and apply them now,
        mid-episode; their state is kept."""
        rows = env_rows(env_ids, self.num_envs)
        with self._lock:
            physics = self._require_physics()
            self._stepping.settle()
            physics.draw(rows)
            self._physics_call(rows, {"parameters": True})

    def push(self, env_ids: Any = None, velocity: Any = None) -> None:
        """Add a velocity to the root of ``env_ids`` (all if None): ``velocity`` per env
        and push axis, or drawn from the randomization's ``Push``."""
        rows = env_rows(env_ids, self.num_envs)
        with self._lock:
            physics = self._require_physics()
            self._stepping.settle()
            physics.draw_push(rows, velocity)
            self._physics_call(rows, {"push": True})

    def physics_parameters(self) -> dict[str, npt.NDArray[np.float64]]:
        """Each randomised parameter's values in effect, per env, by label (copies):
        scale factors, added amounts or set values as the parameter says."""
        with self._lock:
            return self._require_physics().parameters()

    def _require_physics(self) -> PhysicsDraws:
        self._check_open()
        if self._physics is None:
            raise ValueError("this backend randomises no physics; pass "
                             "Backend(randomization=unisim.PhysicsRandomization(...))")
        return self._physics

    def _physics_call(self, rows: npt.NDArray[np.int64], payload: dict[str, bool]) -> None:
        """PHYSICS for ``rows`` to the workers that hold any of them (lock held)."""
        mask = self._reset_mask
        mask[:] = 0
        mask[rows] = 1
        members = [m for m in self._pool.members if mask[m.rows.start:m.rows.stop].any()]
        if members:
            self._plane.inputs_written()
            self._pool.call(Command.PHYSICS, payload, self.timeout, members=members)
            self._plane.outputs_awaited()

