"""``python -m unisim task check | train``: a user's IsaacGym task through the task bridge.

Argument parsing stays light (no torch) so that ``python -m unisim --help`` stays quick.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``task`` subcommand's arguments (``unisim.cli``)."""
    parser.add_argument("action", choices=("check", "train"),
                        help="check: build the task in the worker and step it; train: PPO")
    parser.add_argument("task", help="the task class as package.module:Class, or with "
                        "--registry a registered task name (legged_gym: anymal_c_flat)")
    parser.add_argument("--style", choices=("legged_gym", "vec_task"), default="legged_gym")
    parser.add_argument("--registry", default=None, help="legged_gym's TaskRegistry as "
                        "module:attribute, e.g. legged_gym.envs:task_registry")
    parser.add_argument("--cfg", default=None, help="legged_gym: the config class as "
                        "package.module:Class; vec_task: the task's config as a JSON file")
    parser.add_argument("--path", action="append", default=[], help="a folder of your "
                        "code, put on the worker's sys.path (repeatable)")
    parser.add_argument("--python", default=None, help="the worker's Python 3.8, with the "
                        "SDK (default: IsaacGym's discovery, docs/isaacgym.md)")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--sim-device", default="cpu", help="cpu or cuda:N (GPU pipeline)")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs", help="parent folder of the run folder")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for "
                        "one step of the task (raise it for thousands of envs on few cores)")


def run(args: argparse.Namespace, echo: Callable[[str], None] = print) -> int:
    """``python -m unisim task check | train``."""
    import torch

    from .env import BridgedTask
    from .train import train

    cfg: dict[str, Any] | str | None = args.cfg
    if args.style == "vec_task":
        if not args.cfg:
            raise ValueError("--style vec_task needs --cfg, the task's config as a JSON file")
        cfg = json.loads(Path(args.cfg).read_text())
    data_plane = "cuda" if args.sim_device.startswith("cuda") else "shm"
    with BridgedTask(args.task, args.num_envs, style=args.style, cfg=cfg,
                     registry=args.registry, paths=args.path, sim_device=args.sim_device,
                     data_plane=data_plane, python=args.python, seed=args.seed,
                     timeout=args.timeout, progress=True) as task:
        echo(f"{task.info['class']} on {task.sim.worker_info['python']} "
             f"({task.info['device']}): {task.num_envs} envs, {task.num_observations} "
             f"observations, {task.num_privileged_observations} privileged, "
             f"{task.num_actions} actions, episodes of {task.max_episode_length} steps")
        if args.action == "check":
            started = time.perf_counter()
            for _ in range(100):
                task.step(torch.rand(task.num_envs, task.num_actions, device=task.device)
                          * 2.0 - 1.0)
            echo(f"100 steps of random actions: {time.perf_counter() - started:.2f} s")
            return 0
        run_dir = Path(args.out) / f"task-{time.strftime('%Y%m%d-%H%M%S')}"
        rows = train(task, args.iterations, run_dir, seed=args.seed)
        echo(f"run folder: {run_dir}; final mean return "
             f"{rows[-1]['mean_return'] if rows else float('nan'):.2f}")
    return 0
