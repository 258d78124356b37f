"""unisim: drive a simulator in another process (and another interpreter) as if in-process."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import errors, models
from .backend import Backend
from .errors import (
    BackendDead,
    ProtocolError,
    RemoteError,
    RenderWorkerDied,
    SetupError,
    StateError,
    UnisimError,
    WorkerCrashed,
    WorkerDied,
    WorkerTimeout,
)
from .layout import Layout
from .physics_randomization import Gaussian, LogUniform, PhysicsRandomization, Push, Uniform
from .randomizer import Randomizer
from .render_pool import RenderPool

if TYPE_CHECKING:
    from .tasks import Task


def make(name: str, num_envs: int = 1, *, python: str | Path | None = None, seed: int = 0,
         **options: Any) -> Task:
    """An RL task env (``unisim.tasks``) over a Backend; needs torch (``pip install
    'unisim-bridge[train]'``), imported only here."""
    try:
        from . import tasks
    except ImportError as exc:
        raise SetupError(f"unisim.make needs torch: {exc}",
                         hint="pip install 'unisim-bridge[train]' (torch==2.13.0 first)") from exc
    return tasks.make(name, num_envs, python=python, seed=seed, **options)


__all__ = [
    "Backend",
    "BackendDead",
    "Gaussian",
    "Layout",
    "LogUniform",
    "PhysicsRandomization",
    "ProtocolError",
    "Push",
    "Randomizer",
    "RemoteError",
    "RenderPool",
    "RenderWorkerDied",
    "SetupError",
    "StateError",
    "Uniform",
    "UnisimError",
    "WorkerCrashed",
    "WorkerDied",
    "WorkerTimeout",
    "errors",
    "make",
    "models",
]
