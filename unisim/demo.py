"""The demo: a trained quadruped walks in a worker on another interpreter, as if in-process.

1. walk: the shipped policy (``models/quadruped_policy.npz``, trained by
   ``python -m unisim train quadruped``) drives ``num_envs`` quadrupeds through the task
   layer, with the worker on Python 3.8 when one is set up; env 0 is filmed;
2. speed: the controls it applied are replayed from the same start on that worker, on a
   worker on this interpreter, and on MuJoCo in this process; their env-steps/s are printed
   side by side, with whether the final states are bitwise the same.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from . import models
from .backend import Backend
from .errors import RemoteError, SetupError
from .interpreter import find_python38
from .policy import MlpPolicy

POLICY = "quadruped_policy.npz"
SUBSTEPS = 4  # physics steps per control step (the quadruped task's)
ROUNDS = 3  # replays of each kind, taking turns; the fastest is reported
VIDEO_STRIDE = 3  # control steps per video frame
# Rendering on a CPU: without shadows and multisampling a frame costs ~8x less
# (docs/rendering.md). Only the demo's copy of the model changes; its physics is the same.
FAST_RENDER = '<visual><quality shadowsize="0" offsamples="0"/>'


@dataclass
class Replay:
    """One replay of the walk's controls from its start: who stepped, how fast, where to."""

    label: str  # e.g. "worker on Python 3.8.18, MuJoCo 3.2.3 (loop)"
    mujoco: str
    rate: float  # env-steps/s (control steps of SUBSTEPS physics steps)
    final: Any  # (num_envs, nq) qpos after the replay


@dataclass
class DemoResult:
    worker: str  # which interpreter and why
    python: str
    numpy: str
    num_envs: int
    steps: int
    distance_m: float  # mean forward (+x) distance of the torsos
    min_distance_m: float
    fallen: int  # envs whose episode ended in a fall
    pids: list[int]  # the walk's workers (the default split)
    replays: list[Replay]  # the walk's worker, a worker on this interpreter, in-process
    video: str | None


def policy_path() -> Path:
    return Path(str(resources.files(models.__name__) / POLICY))


def run_demo(num_envs: int, steps: int, python: str | None, video: str | None) -> int:
    result = demo(num_envs, steps, python, video)
    print("\n".join(report(result)))
    return 0 if result.distance_m > 0 else 1


def demo(num_envs: int, steps: int, python: str | None, video: str | None) -> DemoResult:
    from .tasks.quadruped import QuadrupedWalk  # torch: observations are computed here

    class Walk(QuadrupedWalk):
        model = models.path("quadruped").read_text().replace("<visual>", FAST_RENDER, 1)

    if python is None:
        python, worker = find_python38()
    else:
        worker = f"worker on {python} (from --python)"
    print(worker)
    policy = MlpPolicy(policy_path())
    with Walk(num_envs, python=python, seed=0, progress=True) as task:
        sim = task.sim
        steps = min(steps, task.max_episode_length)
        observations = task.reset()
        start = sim.qpos.copy(), sim.qvel.copy()
        controls = np.empty((steps, num_envs, sim.layout.nu))
        fallen = np.zeros(num_envs, dtype=bool)
        recorder = _recorder(video, sim, fps=1.0 / (task.step_dt * VIDEO_STRIDE))
        for i in range(steps):
            step = task.step(policy(observations.numpy()))
            controls[i] = sim.ctrl
            fallen |= step.terminated.numpy()
            observations = step.observations
            if recorder is not None and i % VIDEO_STRIDE == 0:
                try:
                    recorder.capture()
                except RemoteError as exc:  # no OpenGL on this machine: walk on, no video
                    print(f"no video: the worker cannot render ({exc.remote_message}); "
                          "`python -m unisim doctor` shows which GL backend works here")
                    recorder = None
        walked = sim.qpos[:, 0] - start[0][:, 0]
        video_path = str(recorder.close()) if recorder is not None else None
        info = sim.worker_info
        with contextlib.ExitStack() as stack:
            workers = [sim]
            if sim.python != sys.executable:  # the same work on a worker on this interpreter
                workers.append(stack.enter_context(Backend(
                    "mujoco", model="quadruped", num_envs=num_envs, keyframe="stand",
                    python=sys.executable, progress=False)))
            loop = workers[-1].layout.stepper == "loop"
            replays = best_of([*(functools.partial(on_worker, w, start, controls)
                                 for w in workers),
                               functools.partial(in_process, start, controls, loop)])
    return DemoResult(
        worker=worker, python=info["python"], numpy=str(info.get("numpy", "?")),
        pids=list(sim.worker_pids), num_envs=num_envs, steps=steps, distance_m=float(walked.mean()),
        min_distance_m=float(walked.min()), fallen=int(fallen.sum()), replays=replays,
        video=video_path)


def best_of(replays: list[Callable[[], Replay]], rounds: int = ROUNDS) -> list[Replay]:
    """Each replay ``rounds`` times, taking turns (the machine's load drifts); the fastest
    round of each."""
    results: list[list[Replay]] = [[] for _ in replays]
    for _ in range(rounds):
        for replay, done in zip(replays, results, strict=True):
            done.append(replay())
    return [max(done, key=lambda r: r.rate) for done in results]


def on_worker(sim: Backend, start: tuple[Any, Any], controls: Any) -> Replay:
    """Replay ``controls`` from ``start`` on ``sim``'s workers."""
    sim.reset(qpos=start[0], qvel=start[1])
    begun = time.perf_counter()
    for ctrl in controls:
        sim.step(ctrl, substeps=SUBSTEPS)
    rate = sim.num_envs * len(controls) / (time.perf_counter() - begun)
    version = sim.layout.engine_version
    label = f"worker on Python {sim.worker_info['python']}, MuJoCo {version} " \
            f"({sim.layout.stepper})"
    return Replay(label, version, rate, sim.qpos.copy())


def in_process(start: tuple[Any, Any], controls: Any, loop: bool) -> Replay:
    """Replay ``controls`` from ``start`` with MuJoCo in this process, stepped as the last
    worker's engine steps (a loop over MjData, or ``mujoco.batch`` on every core)."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(models.path("quadruped")))
    qpos, qvel = start
    num_envs = len(qpos)
    if loop or not _has_batch():
        datas = [mujoco.MjData(model) for _ in range(num_envs)]
        for data, q, v in zip(datas, qpos, qvel, strict=True):
            mujoco.mj_resetDataKeyframe(model, data, 0)
            data.qpos[:], data.qvel[:] = q, v
            mujoco.mj_forward(model, data)
        begun = time.perf_counter()
        for ctrl in controls:
            for data, row in zip(datas, ctrl, strict=True):
                data.ctrl[:] = row
                mujoco.mj_step(model, data, SUBSTEPS)
        elapsed = time.perf_counter() - begun
        final, stepper = np.stack([data.qpos for data in datas]), "loop"
    else:
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
            batch.step(nstep=SUBSTEPS)
        elapsed = time.perf_counter() - begun
        final, stepper = qpos_view.copy(), "batch"
    label = f"in-process, Python {platform.python_version()}, MuJoCo {mujoco.__version__} " \
            f"({stepper})"
    return Replay(label, mujoco.__version__, num_envs * len(controls) / elapsed, final)


def _has_batch() -> bool:
    try:
        import mujoco.batch  # noqa: F401
    except ImportError:
        return False
    return True


def _recorder(video: str | None, sim: Backend, fps: float) -> Any:
    if video is None:
        return None
    from .video import VideoRecorder

    try:
        return VideoRecorder(video, sim, camera="track", fps=fps)
    except SetupError as exc:
        print(f"no video: {exc} ({exc.hint})")
        return None


def workers_line(result: DemoResult) -> str:
    """Which interpreter the walk ran on, and in how many processes."""
    python = f"Python {result.python} (numpy {result.numpy})"
    if len(result.pids) == 1:
        return f"worker: {python}, pid {result.pids[0]}"
    return (f"workers: {python}, {len(result.pids)} processes (the default split), "
            f"pids {', '.join(map(str, result.pids))}")


def report(result: DemoResult) -> list[str]:
    """What the demo prints at the end (and tools/figures/demo_figures.py publishes)."""
    local = result.replays[-1]
    lines = [
        workers_line(result),
        f"{result.num_envs} quadrupeds walked {result.steps} steps "
        f"({result.steps * 0.02:.0f} s): mean distance {result.distance_m:.2f} m forward "
        f"(least {result.min_distance_m:.2f} m), {result.fallen} fell",
        f"the same controls replayed from the same start, env-steps/s ({SUBSTEPS} physics "
        f"steps each; best of {ROUNDS} rounds taking turns):",
    ]
    width = max(len(replay.label) for replay in result.replays)
    for replay in result.replays:
        note = ""
        if replay is not local:
            same = "bitwise the same state" if np.array_equal(replay.final, local.final) \
                else "other last bits (another MuJoCo)"
            note = f"  {replay.rate / local.rate:.2f}x in-process; {same}"
        lines.append(f"  {replay.label:<{width}} {replay.rate:>8,.0f}{note}")
    if result.video:
        lines.append(f"video of env 0: {result.video}")
    return lines
