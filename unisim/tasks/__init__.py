"""RL tasks over a ``Backend``: ``make(name, num_envs=...)`` builds one (needs torch)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from .base import Task, Transition

# name -> "module:Class", imported when made; ``register`` adds more.
TASKS: dict[str, str | type[Task]] = {
    "cartpole": "unisim.tasks.cartpole:Cartpole",
    "quadruped": "unisim.tasks.quadruped:QuadrupedWalk",
}


def register(name: str, task: str | type[Task]) -> None:
    """Make ``task`` (a ``Task`` subclass or ``"module:Class"``) available to ``make``."""
    TASKS[name] = task


def task_class(name: str) -> type[Task]:
    """The ``Task`` subclass registered as ``name``, or importable as ``"module:Class"``."""
    if name not in TASKS and ":" not in name:
        raise ValueError(f"no task {name!r}; registered tasks: {', '.join(sorted(TASKS))} "
                         "(add one with unisim.tasks.register, or name it as module:Class)")
    entry = TASKS.get(name, name)
    if isinstance(entry, str):
        module, _, attribute = entry.partition(":")
        entry = getattr(importlib.import_module(module), attribute)
    if not (isinstance(entry, type) and issubclass(entry, Task)):
        raise TypeError(f"task {name!r} is registered as {entry!r}, which is not a Task subclass")
    return entry


def make(name: str, num_envs: int = 1, *, python: str | Path | None = None, seed: int = 0,
         **options: Any) -> Task:
    """Start task ``name`` with ``num_envs`` envs on a worker running ``python``."""
    return task_class(name)(num_envs, python=python, seed=seed, **options)


__all__ = ["TASKS", "Task", "Transition", "make", "register", "task_class"]
