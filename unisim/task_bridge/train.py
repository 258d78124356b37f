"""Train a bridged task with rsl_rl 5.x PPO (``python -m unisim task train``).

The run folder holds what ``python -m unisim train`` writes for a built-in task
(``metrics.jsonl``, ``curves.png``, rsl_rl checkpoints, ``rsl_rl.log``), from the same
pieces: ``training.configs.runner_config``, ``ProgressWriter``, ``plot_curves``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import torch

from ..training.configs import Recipe, runner_config
from ..training.plots import plot_curves
from ..training.progress import ProgressWriter, read_metrics
from .env import BridgedTask
from .rsl_rl import RslRlTaskEnv, obs_groups

STEPS_PER_ENV = 24  # env steps per env of one PPO iteration (rsl_rl's num_steps_per_env)


def train(task: BridgedTask, iterations: int, run_dir: Path, *, seed: int = 0,
          steps_per_env: int = STEPS_PER_ENV, hidden_dims: tuple[int, ...] = (128, 128),
          learning_rate: float = 1e-3, random_start: bool = True,
          title: str = "") -> list[dict[str, Any]]:
    """PPO on ``task`` for ``iterations``; the metrics rows, one per iteration.
    ``random_start``: rsl_rl's ``init_at_random_ep_len`` (spreads the time-outs; the first
    episodes are then shorter, so their returns are no measure of the policy)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    torch.set_num_threads(1)  # small MLPs gain nothing from more; the worker needs a core
    env = RslRlTaskEnv(task, cfg=dict(task.options))
    recipe = Recipe(num_envs=task.num_envs, iterations=iterations, steps_per_env=steps_per_env,
                    hidden_dims=hidden_dims, learning_rate=learning_rate)
    name = title or str(task.options["task"])
    config = runner_config(recipe, iterations, {"class_name": ProgressWriter,
                                                "total": iterations, "description": name})
    config["obs_groups"] = obs_groups(task)
    from rsl_rl.runners import OnPolicyRunner

    with (run_dir / "rsl_rl.log").open("w") as log, contextlib.redirect_stdout(log):
        runner = OnPolicyRunner(env, config, log_dir=str(run_dir), device=str(task.device))
        runner.learn(iterations, init_at_random_ep_len=random_start)
    rows = [row for row in read_metrics(run_dir) if "mean_return" in row]
    plot_curves(rows, run_dir / "curves.png", f"{name} through the task bridge: rsl_rl PPO",
                task.max_episode_length)
    return rows
