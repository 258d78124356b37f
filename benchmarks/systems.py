"""The systems the suite compares, each behind one small interface.

A system is built for one ``num_envs`` and offers ``measure(budget) -> env-steps/s``,
``close()`` and ``worker_pids`` (the processes whose pipe traffic counts as the
system's control plane; empty where that is not a pipe).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

import unisim
from benchmarks.py38.runner import CTRL_SETS, InProcessMujoco, random_controls, timed_rate
from tools.figures.doc_figures import ROOT
from unisim.interpreter import python38_candidates
from unisim.pool import split_rows

PY38 = Path(__file__).resolve().parent / "py38"  # helpers run by path on another interpreter
SUBSTEPS = 5  # the control rate of every system: 5 physics steps per env-step


class System(Protocol):
    num_envs: int
    worker_pids: list[int]

    def measure(self, budget: float) -> float: ...

    def close(self) -> None: ...


class InProcess:
    """MuJoCo in this process, stepped as the worker would step it."""

    def __init__(self, model: str, num_envs: int, keyframe: str | None) -> None:
        self.num_envs = num_envs
        self.worker_pids: list[int] = []
        self.sim = InProcessMujoco(model, num_envs, keyframe, SUBSTEPS)

    def measure(self, budget: float) -> float:
        return timed_rate(self.sim.step, self.num_envs, budget)[0]

    def close(self) -> None:
        self.sim.close()


class Unisim:
    """A ``unisim.Backend``; ``options`` go to its constructor (``python=``, ``workers=``...)."""

    def __init__(self, model: str, num_envs: int, keyframe: str | None,
                 substeps: int = SUBSTEPS, **options: Any) -> None:
        self.num_envs = num_envs
        self.substeps = substeps
        self.sim = unisim.Backend("mujoco", model=model, num_envs=num_envs, keyframe=keyframe,
                                  progress=False, timeout=120.0, **options)
        self.controls = random_controls(num_envs, self.sim.layout.ctrl_range)
        self.count = 0
        pids = getattr(self.sim, "worker_pids", None)  # a worker pool has several
        self.worker_pids = list(pids) if pids is not None else [self.sim.worker_pid]

    def step(self) -> None:
        self.count += 1
        self.sim.step(self.controls[self.count % CTRL_SETS], substeps=self.substeps)

    def measure(self, budget: float) -> float:
        return timed_rate(self.step, self.num_envs, budget)[0]

    def close(self) -> None:
        self.sim.close()


def mjcf_env(model: str, keyframe: str | None) -> Callable[[], Any]:
    """A picklable factory of ``gym_env.MjcfEnv`` over ``model`` at our control rate."""
    from benchmarks.gym_env import MjcfEnv

    return functools.partial(MjcfEnv, model, keyframe, SUBSTEPS)


def registered_env(env_id: str) -> Callable[[], Any]:
    """A picklable factory of a registered gymnasium env (e.g. ``Ant-v4``)."""
    import gymnasium

    return functools.partial(gymnasium.make, env_id)


class GymVector:
    """gymnasium's ``AsyncVectorEnv(shared_memory=True)`` or ``SyncVectorEnv`` of ``make()``."""

    def __init__(self, make: Callable[[], Any], num_envs: int, *, asynchronous: bool) -> None:
        import gymnasium

        if asynchronous:
            self.env: Any = gymnasium.vector.AsyncVectorEnv([make] * num_envs,
                                                             shared_memory=True)
            self.worker_pids = [p.pid for p in self.env.processes]
        else:
            self.env = gymnasium.vector.SyncVectorEnv([make] * num_envs)
            self.worker_pids = []
        self.num_envs = num_envs
        self.env.reset(seed=0)
        space = self.env.single_action_space
        self.controls = random_controls(num_envs, np.stack([space.low, space.high], axis=1))
        self.count = 0

    def step(self) -> None:
        self.count += 1
        self.env.step(self.controls[self.count % CTRL_SETS])

    def measure(self, budget: float) -> float:
        return timed_rate(self.step, self.num_envs, budget)[0]

    def close(self) -> None:
        self.env.close()


class RemoteRunner:
    """``runner.py`` served by another interpreter: one long-lived process per interpreter."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.process = subprocess.Popen(
            [python, str(PY38 / "runner.py")], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})

    def call(self, **request: Any) -> dict[str, Any]:
        self.send(**request)
        return self.receive()

    def send(self, **request: Any) -> None:
        """Ask without waiting for the reply (``receive``): several runners work at once."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"runner on {self.python} exited with status "
                               f"{self.process.wait()}")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"runner on {self.python}: {reply['error']}")
        return reply

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)


class Remote:
    """A system that ``runner.py`` builds and times inside a ``RemoteRunner``."""

    def __init__(self, runner: RemoteRunner, num_envs: int, **request: Any) -> None:
        self.runner = runner
        self.num_envs = num_envs
        self.worker_pids: list[int] = []
        self.kind = runner.call(op="make", num_envs=num_envs, **request)["kind"]

    def measure(self, budget: float) -> float:
        return float(self.runner.call(op="measure", budget=budget)["rate"])

    def close(self) -> None:
        self.runner.call(op="close")


class Concurrent:
    """``processes`` runners on ``python``, each building ``num_envs / processes`` envs of
    ``request`` and timed at the same moment: independent processes with no coordination,
    so their summed rate is what the machine gives a pool of that many workers, at best."""

    def __init__(self, python: str, num_envs: int, processes: int, **request: Any) -> None:
        self.num_envs = num_envs
        self.worker_pids: list[int] = []
        self.runners: list[RemoteRunner] = []
        try:
            for share in split_rows(num_envs, processes):  # the unshared pool's shares
                runner = RemoteRunner(python)
                self.runners.append(runner)
                runner.send(op="make", num_envs=len(share), **request)
            for runner in self.runners:
                runner.receive()
        except Exception:
            self.close()
            raise

    def measure(self, budget: float) -> float:
        for runner in self.runners:
            runner.send(op="measure", budget=budget)
        return sum(float(runner.receive()["rate"]) for runner in self.runners)

    def close(self) -> None:
        for runner in self.runners:
            runner.close()  # its stdin closed: the runner drops its system and exits


def python38() -> str | None:
    """The Python 3.8 worker interpreter: ``UNISIM_PY38``, else the project's ``.venv38``."""
    return next((path for path, _ in python38_candidates() if os.access(path, os.X_OK)), None)


def envpool_python() -> str | None:
    """EnvPool's own venv (``make .venv-envpool/.installed``), if it was built."""
    candidate = os.environ.get("UNISIM_ENVPOOL_PYTHON") or str(ROOT / ".venv-envpool/bin/python")
    return candidate if os.access(candidate, os.X_OK) else None


HOST_PYTHON = sys.executable
