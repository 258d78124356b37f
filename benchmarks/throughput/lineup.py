"""The systems the suite compares, by name: their labels and how each is built."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import mujoco

import unisim
from benchmarks.systems import (
    SUBSTEPS,
    GymVector,
    InProcess,
    Remote,
    RemoteRunner,
    System,
    Unisim,
    mjcf_env,
    registered_env,
)

Factory = Callable[[int], System]

HOST = f"{sys.version_info.major}.{sys.version_info.minor}"
QUADRUPED = str(unisim.models.path("quadruped"))
POOL_K = 2
ASYNC = "gymnasium AsyncVectorEnv(shared_memory=True)"
SYNC = "gymnasium SyncVectorEnv"
INPROC = f"in-process {HOST}, MuJoCo {mujoco.__version__}"
INPROC38 = "in-process 3.8, MuJoCo 3.2 (MjData loop)"
WORKER, WORKER38 = f"unisim worker {HOST}", "unisim worker 3.8"
PIPE = f"unisim worker {HOST}, pipe path (doorbell=False)"
POOL, POOL38 = f"unisim pool K={POOL_K}, {HOST}", f"unisim pool K={POOL_K}, 3.8"
ENVPOOL = f"EnvPool Ant-v4 ({os.cpu_count()} threads)"
ANT_ASYNC, ANT_INPROC = f"{ASYNC} of MjcfEnv, ant.xml", f"in-process {HOST}, ant.xml"
GYM_ANT_ASYNC = "gymnasium Ant-v4, AsyncVectorEnv(shared_memory=True)"
GYM_ANT_SYNC = "gymnasium Ant-v4, SyncVectorEnv"
ANT_WORKER, ANT_WORKER38 = f"{WORKER}, ant.xml", f"{WORKER38}, ant.xml"
ANT_POOL, ANT_POOL38 = f"{POOL}, ant.xml", f"{POOL38}, ant.xml"


def quadruped_systems(py38: str | None, loop38: RemoteRunner | None,
                      ) -> dict[str, Factory | str]:
    missing38 = "n/a (no Python 3.8: set UNISIM_PY38)"
    return {
        # gymnasium first: AsyncVectorEnv forks, and should not inherit the others' pipes
        ASYNC: lambda n: GymVector(mjcf_env(QUADRUPED, "stand"), n, asynchronous=True),
        SYNC: lambda n: GymVector(mjcf_env(QUADRUPED, "stand"), n, asynchronous=False),
        INPROC: lambda n: InProcess(QUADRUPED, n, "stand"),
        WORKER: lambda n: Unisim(QUADRUPED, n, "stand", workers=1),
        PIPE: lambda n: Unisim(QUADRUPED, n, "stand", workers=1, doorbell=False),
        POOL: lambda n: Unisim(QUADRUPED, n, "stand", workers=POOL_K),
        INPROC38: (lambda n: Remote(loop38, n, system="mujoco", model=QUADRUPED,
                                    keyframe="stand", substeps=SUBSTEPS))
        if loop38 else missing38,
        WORKER38: (lambda n: Unisim(QUADRUPED, n, "stand", python=py38, workers=1))
        if py38 else missing38,
        POOL38: (lambda n: Unisim(QUADRUPED, n, "stand", python=py38, workers=POOL_K))
        if py38 else missing38,
    }


def ant_systems(py38: str | None, envpool: RemoteRunner | str) -> dict[str, Factory | str]:
    import gymnasium

    ant = str(Path(gymnasium.__file__).parent / "envs/mujoco/assets/ant.xml")
    missing38 = "n/a (no Python 3.8: set UNISIM_PY38)"
    return {
        ANT_ASYNC: lambda n: GymVector(mjcf_env(ant, None), n, asynchronous=True),
        GYM_ANT_ASYNC: lambda n: GymVector(registered_env("Ant-v4"), n, asynchronous=True),
        GYM_ANT_SYNC: lambda n: GymVector(registered_env("Ant-v4"), n, asynchronous=False),
        ENVPOOL: (lambda n: Remote(envpool, n, system="envpool", task="Ant-v4",
                                   num_threads=os.cpu_count()))
        if isinstance(envpool, RemoteRunner) else envpool,
        ANT_INPROC: lambda n: InProcess(ant, n, None),
        ANT_WORKER: lambda n: Unisim(ant, n, None, workers=1),
        ANT_POOL: lambda n: Unisim(ant, n, None, workers=POOL_K),
        ANT_WORKER38: (lambda n: Unisim(ant, n, None, python=py38, workers=1))
        if py38 else missing38,
        ANT_POOL38: (lambda n: Unisim(ant, n, None, python=py38, workers=POOL_K))
        if py38 else missing38,
    }
