"""The demo: a quadruped stepped on a worker, next to the same work done in-process."""

from __future__ import annotations

import time

import numpy as np
from tqdm import tqdm

from . import models
from .backend import Backend

SUBSTEPS = 4


def _gait(t: float, num_envs: int) -> np.ndarray:
    """A trotting pattern of position targets, phase-shifted per env."""
    phase = t * 6.0 + np.linspace(0.0, np.pi, num_envs)[:, None]
    hips = 0.4 * np.sin(phase + np.array([0.0, np.pi, np.pi, 0.0]))
    knees = 0.9 + 0.3 * np.cos(phase + np.array([0.0, np.pi, np.pi, 0.0]))
    return np.stack([hips, knees], axis=2).reshape(num_envs, 8)


def _in_process(num_envs: int, steps: int) -> float:
    """env-steps/s of the same work in this process (MjData loop or mujoco.batch)."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(models.path("quadruped")))
    try:
        import mujoco.batch

        batch = mujoco.batch.Batch(model, nsim=num_envs)
        batch.reset(keyframe=0)
        ctrl = batch.bind("ctrl")
        start = time.perf_counter()
        for i in range(steps):
            ctrl[:] = _gait(i * SUBSTEPS * model.opt.timestep, num_envs)
            batch.step(nstep=SUBSTEPS)
    except ImportError:
        datas = [mujoco.MjData(model) for _ in range(num_envs)]
        for data in datas:
            mujoco.mj_resetDataKeyframe(model, data, 0)
        start = time.perf_counter()
        for i in range(steps):
            targets = _gait(i * SUBSTEPS * model.opt.timestep, num_envs)
            for data, target in zip(datas, targets, strict=True):
                data.ctrl[:] = target
                mujoco.mj_step(model, data, SUBSTEPS)
    return num_envs * steps / (time.perf_counter() - start)


def run_demo(num_envs: int, steps: int, python: str | None) -> int:
    with Backend("mujoco", model="quadruped", num_envs=num_envs, keyframe="stand",
                 python=python) as sim:
        print(f"worker pid {sim.worker_pid}: Python {sim.worker_info['python']}, "
              f"MuJoCo {sim.layout.engine_version} ({sim.layout.stepper} stepping), "
              f"started in {sim.startup_seconds:.2f} s")
        dt = sim.layout.timestep * SUBSTEPS
        start = time.perf_counter()
        for i in tqdm(range(steps), desc=f"{num_envs} quadrupeds", unit="step"):
            sim.step(_gait(i * dt, num_envs), substeps=SUBSTEPS)
        worker_rate = num_envs * steps / (time.perf_counter() - start)
        height = float(np.mean(sim.qpos[:, 2]))
        travelled = float(np.mean(np.linalg.norm(sim.qpos[:, :2], axis=1)))
    local_rate = _in_process(num_envs, steps)
    print(f"mean torso height {height:.3f} m, mean distance from start {travelled:.3f} m")
    print(f"{'':<12}{'env-steps/s':>14}")
    print(f"{'worker':<12}{worker_rate:>14,.0f}")
    print(f"{'in-process':<12}{local_rate:>14,.0f}")
    print(f"ratio worker / in-process: {worker_rate / local_rate:.2f}")
    return 0
