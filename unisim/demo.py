"""The demo: a trained quadruped walks in a worker on another interpreter, as if in-process.

1. walk: the shipped policy (``models/quadruped_policy.npz``, trained by
   ``python -m unisim train quadruped``) drives ``num_envs`` quadrupeds through the task
   layer, with the worker on Python 3.8 when one is set up; env 0 is filmed;
2. speed: the controls it applied are replayed on the worker and on MuJoCo in this
   process, from the same start, and the env-steps/s are printed side by side.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import models
from .backend import Backend
from .errors import SetupError
from .policy import MlpPolicy

POLICY = "quadruped_policy.npz"
VIDEO_STRIDE = 2  # control steps per video frame


@dataclass
class DemoResult:
    worker: str  # which interpreter and why
    python: str
    engine_version: str
    stepper: str
    numpy: str
    num_envs: int
    steps: int
    distance_m: float  # mean forward (+x) distance of the torsos
    min_distance_m: float
    fallen: int  # envs whose episode ended in a fall
    worker_rate: float  # env-steps/s replaying the controls on the worker
    local_rate: float  # the same, MuJoCo in this process
    local_version: str
    same_state: bool  # the replays ended in bitwise the same state
    video: str | None


def policy_path() -> Path:
    return Path(str(resources.files(models.__name__) / POLICY))


def run_demo(num_envs: int, steps: int, python: str | None, video: str | None) -> int:
    result = demo(num_envs, steps, python, video)
    print("\n".join(report(result)))
    return 0 if result.distance_m > 0 else 1


def demo(num_envs: int, steps: int, python: str | None, video: str | None) -> DemoResult:
    from .tasks import make  # torch: the task layer computes observations on the host
    from .training.worker_python import find_python38

    if python is None:
        python, worker = find_python38()
    else:
        worker = f"worker on {python} (from --python)"
    print(worker)
    policy = MlpPolicy(policy_path())
    with make("quadruped", num_envs, python=python, seed=0, progress=True) as task:
        sim = task.sim
        steps = min(steps, task.max_episode_length)
        observations = task.reset()
        start_qpos, start_qvel = sim.qpos.copy(), sim.qvel.copy()
        controls = np.empty((steps, num_envs, sim.layout.nu))
        fallen = np.zeros(num_envs, dtype=bool)
        recorder = _recorder(video, sim, fps=1.0 / (task.step_dt * VIDEO_STRIDE))
        for i in range(steps):
            step = task.step(policy(observations.numpy()))
            controls[i] = sim.ctrl
            fallen |= step.terminated.numpy()
            observations = step.observations
            if recorder is not None and i % VIDEO_STRIDE == 0:
                recorder.capture()
        walked = sim.qpos[:, 0] - start_qpos[:, 0]
        video_path = str(recorder.close()) if recorder is not None else None
        sim.reset(qpos=start_qpos, qvel=start_qvel)
        begun = time.perf_counter()
        for ctrl in controls:
            sim.step(ctrl, substeps=task.substeps)
        worker_rate = num_envs * steps / (time.perf_counter() - begun)
        worker_final = sim.qpos.copy()
        layout, info = sim.layout, sim.worker_info
    local_rate, local_final, local_version = in_process(start_qpos, start_qvel, controls,
                                                        task.substeps)
    return DemoResult(
        worker=worker, python=info["python"], engine_version=layout.engine_version,
        stepper=layout.stepper, numpy=str(info.get("numpy", "?")), num_envs=num_envs,
        steps=steps, distance_m=float(walked.mean()), min_distance_m=float(walked.min()),
        fallen=int(fallen.sum()), worker_rate=worker_rate, local_rate=local_rate,
        local_version=local_version, same_state=bool(np.array_equal(worker_final, local_final)),
        video=video_path)


def in_process(qpos: npt.NDArray[np.float64], qvel: npt.NDArray[np.float64],
               controls: npt.NDArray[np.float64], substeps: int) -> tuple[float, Any, str]:
    """Replay ``controls`` from ``qpos``/``qvel`` with MuJoCo in this process, as the
    worker's engine would (``mujoco.batch`` on every core, else a loop over MjData)."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(models.path("quadruped")))
    num_envs = len(qpos)
    try:
        import mujoco.batch

        batch = mujoco.batch.Batch(model, nsim=num_envs,
                                   nthread=min(os.cpu_count() or 1, num_envs))
        batch.reset(keyframe=0, stage=0)
        batch.bind("qpos")[:] = qpos
        batch.bind("qvel")[:] = qvel
        batch.forward()
        ctrl_view, qpos_view = batch.bind("ctrl"), batch.bind("qpos")
        begun = time.perf_counter()
        for ctrl in controls:
            ctrl_view[:] = ctrl
            batch.step(nstep=substeps)
        elapsed = time.perf_counter() - begun
        final = qpos_view.copy()
    except ImportError:
        datas = [mujoco.MjData(model) for _ in range(num_envs)]
        for data, q, v in zip(datas, qpos, qvel, strict=True):
            mujoco.mj_resetDataKeyframe(model, data, 0)
            data.qpos[:], data.qvel[:] = q, v
            mujoco.mj_forward(model, data)
        begun = time.perf_counter()
        for ctrl in controls:
            for data, row in zip(datas, ctrl, strict=True):
                data.ctrl[:] = row
                mujoco.mj_step(model, data, substeps)
        elapsed = time.perf_counter() - begun
        final = np.stack([data.qpos for data in datas])
    return num_envs * len(controls) / elapsed, final, mujoco.__version__


def _recorder(video: str | None, sim: Backend, fps: float) -> Any:
    if video is None:
        return None
    from .video import VideoRecorder

    try:
        return VideoRecorder(video, sim, camera="track", fps=fps)
    except SetupError as exc:
        print(f"no video: {exc} ({exc.hint})")
        return None


def report(result: DemoResult) -> list[str]:
    """What the demo prints at the end (and publishes into the README)."""
    where = (f"Python {result.python} (numpy {result.numpy}), MuJoCo {result.engine_version} "
             f"({result.stepper} stepping)")
    same = ("bitwise the same final state" if result.same_state else
            f"states differ in the last bits: MuJoCo {result.engine_version} in the worker, "
            f"{result.local_version} here")
    rate = "env-steps/s (control steps of 4 physics steps, 1 worker)"
    lines = [
        f"worker: {where}",
        f"{result.num_envs} quadrupeds walked {result.steps} steps "
        f"({result.steps * 0.02:.0f} s): mean distance {result.distance_m:.2f} m forward "
        f"(least {result.min_distance_m:.2f} m), {result.fallen} fell",
        f"replaying those controls, {rate}:",
        f"  worker, Python {result.python}, MuJoCo {result.engine_version}  "
        f"{result.worker_rate:>10,.0f}",
        f"  in-process, MuJoCo {result.local_version}{'':>13}"
        f"{result.local_rate:>10,.0f}",
        f"  ratio worker / in-process {result.worker_rate / result.local_rate:.2f}; {same}",
    ]
    if result.video:
        lines.append(f"video of env 0: {result.video}")
    return lines
