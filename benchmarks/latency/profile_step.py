"""Where a step's time goes, on both sides: pyinstrument over many steps.

    python -m benchmarks.latency.profile_step [--num-envs 1] [--model cartpole]
                                              [--worker-envs 4096] [--worker-model ant.xml]
                                              [--name step-profile]

The host's side: ``Backend.step`` on the pipe path (``doorbell=False``) and on the doorbell,
one after the other. On the trivial model (one cartpole) the worker's physics is a few
microseconds, so each profile is the host's own overhead plus its wait for the reply:
``os.write``/``os.read`` on the pipe, the spin and the futex wait on the doorbell.

The worker's side: its MuJoCo engine's step (the stepper and the warnings check,
``py38.runner.WorkerStepper``) on every core, in this process, at ``--worker-envs`` envs of
``--worker-model`` (gymnasium's ant): the physics, and the Python around it that runs on
one thread while the engine's other threads wait.

``--name`` publishes the trees as the block ``figures:NAME`` of docs/benchmarks.md
(tools/figures/doc_figures.py).
"""

from __future__ import annotations

import argparse
import platform
from collections.abc import Callable
from pathlib import Path

import numpy as np
from pyinstrument import Profiler

import unisim
from benchmarks.py38.runner import WorkerStepper
from benchmarks.split.sweep import default_model
from tools.figures.doc_figures import invocation, publish, stamp
from unisim import split
from unisim.process import BOOTSTRAP


def profile(model: str, num_envs: int, steps: int, interval: float, pipe: bool
            ) -> tuple[float, str]:
    """(µs per step under the profiler, pyinstrument's call tree) of one path."""
    with unisim.Backend("mujoco", model=model, num_envs=num_envs, progress=False,
                        doorbell=not pipe) as sim:
        ctrl = np.zeros((num_envs, sim.layout.nu))
        for _ in range(200):  # warm up
            sim.step(ctrl)
        return profiled(lambda: sim.step(ctrl), steps, interval)


def profile_worker(model: str, num_envs: int, steps: int, interval: float
                   ) -> tuple[float, str]:
    """The same for the worker's engine step, on every core, in this process."""
    stepper = WorkerStepper(model, num_envs, 1, split.cores(), str(BOOTSTRAP.parent))
    try:
        for _ in range(3):  # warm up
            stepper.step()
        return profiled(stepper.step, steps, interval)
    finally:
        stepper.close()


def profiled(step: Callable[[], None], steps: int, interval: float) -> tuple[float, str]:
    """(µs per ``step()`` under the profiler, pyinstrument's call tree) over ``steps`` calls."""
    profiler = Profiler(interval=interval)
    with profiler:
        for _ in range(steps):
            step()
    session = profiler.last_session
    assert session is not None
    lines = profiler.output_text(unicode=True, color=False, show_all=False).splitlines()
    root = next(i for i, line in enumerate(lines) if line[:1].isdigit())  # after the banner
    return session.duration / steps * 1e6, "\n".join(lines[root:]).rstrip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="cartpole")
    parser.add_argument("--num-envs", type=int, default=1)
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--interval", type=float, default=1e-4, help="sampling interval (s)")
    parser.add_argument("--worker-model", default=default_model(), help="MJCF path")
    parser.add_argument("--worker-envs", type=int, default=4096)
    parser.add_argument("--worker-steps", type=int, default=200)
    parser.add_argument("--name", help="publish as figures:NAME in docs/benchmarks.md")
    args = parser.parse_args()
    command = invocation()
    parts = [f"`{command}`: {split.cores()} CPUs, Python "
             f"{platform.python_version()}; {stamp()}."]
    data = {}
    for label, pipe in (("pipe path (doorbell=False)", True), ("doorbell", False)):
        per_step, tree = profile(args.model, args.num_envs, args.steps, args.interval, pipe)
        data[label] = {"us_per_step": per_step, "tree": tree}
        parts.append(f"{args.steps} steps of {args.model} x{args.num_envs}, {label}: "
                     f"{per_step:.1f} µs per step under the profiler\n\n```\n{tree}\n```")
    per_step, tree = profile_worker(args.worker_model, args.worker_envs, args.worker_steps,
                                    args.interval)
    data["worker"] = {"us_per_step": per_step, "tree": tree}
    parts.append(f"The worker's side: {args.worker_steps} engine steps of "
                 f"{Path(args.worker_model).name} x{args.worker_envs} on every core: "
                 f"{per_step:.1f} µs per step under the profiler\n\n```\n{tree}\n```")
    block = "\n\n".join(parts) + "\n"
    print(block)
    if args.name:
        print("published in", publish(args.name, block, data, command))


if __name__ == "__main__":
    main()
