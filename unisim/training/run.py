"""One training run: rsl_rl PPO through ``RslRlVecEnv``, written into a run folder.

The folder (``runs/<task>-<time>/``) holds ``metrics.jsonl`` (one line per iteration),
``curves.png`` (the learning curve), ``model_<iteration>.pt`` (rsl_rl checkpoints, the
last is the trained policy), ``policy.mp4`` (the trained policy, env 0),
``rsl_rl.log`` (rsl_rl's own printout) and ``summary.json`` (the figures below).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from rsl_rl.runners import OnPolicyRunner
from tensordict import TensorDict

from ..integrations.rsl_rl import RslRlVecEnv
from ..interpreter import find_python38
from ..tasks import Task, make, task_class
from .configs import DEFAULT_RECIPE, RECIPES, runner_config
from .plots import plot_curves
from .progress import ProgressWriter, read_metrics

Policy = Callable[[TensorDict], torch.Tensor]


@dataclass
class RunResult:
    run_dir: str
    task: str
    worker: str
    num_envs: int
    iterations: int
    wall_s: float  # training only (rsl_rl's learn)
    final_mean_return: float  # rsl_rl's mean over the last 100 training episodes
    final_mean_episode_length: float
    max_episode_length: int
    eval_return: float  # one deterministic episode per env from fresh starts
    eval_episode_length: float
    iteration_at_90pct: int | None  # first with mean episode length >= 90% of the maximum
    seconds_at_90pct: float | None
    checkpoint: str
    video: str | None
    randomized: bool = False  # the task's physics randomization (docs/randomization.md)


def train(task_name: str, *, iterations: int | None = None, num_envs: int | None = None,
          seed: int = 0, python: str | None = None, out: str | Path = "runs",
          video: bool = True, echo: Callable[[str], None] = print,
          randomize: bool = False) -> RunResult:
    """Train ``task_name`` with PPO; returns the figures also saved in ``summary.json``."""
    task_class(task_name)  # an unknown name fails here, before anything is started
    recipe = RECIPES.get(task_name, DEFAULT_RECIPE)
    iterations = recipe.iterations if iterations is None else iterations
    num_envs = recipe.num_envs if num_envs is None else num_envs
    if iterations < 1 or num_envs < 1:
        raise ValueError(f"iterations and num_envs must be at least 1, got {iterations} and "
                         f"{num_envs}")
    if python is None:
        python, worker = find_python38()
    else:
        worker = f"worker on {python} (from --python)"
    echo(worker)
    kind = f"{task_name}-randomized" if randomize else task_name
    run_dir = Path(out) / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir.mkdir(parents=True)
    echo(f"run folder: {run_dir}")
    torch.manual_seed(seed)
    torch.set_num_threads(1)  # small MLPs gain nothing from more; the worker needs a core
    with make(task_name, num_envs, python=python, seed=seed, progress=True,
              randomize=randomize) as task:
        env = RslRlVecEnv(task, cfg={"task": task_name, "num_envs": num_envs, "seed": seed})
        logger = {"class_name": ProgressWriter, "total": iterations, "description": task_name}
        config = runner_config(recipe, iterations, logger)
        with (run_dir / "rsl_rl.log").open("w") as log, contextlib.redirect_stdout(log):
            runner = OnPolicyRunner(env, config, log_dir=str(run_dir), device="cpu")
            started = time.perf_counter()
            runner.learn(iterations, init_at_random_ep_len=True)
            wall = time.perf_counter() - started
        policy = runner.get_inference_policy()
        eval_return, eval_length = evaluate(task, policy)
        video_path = record(task, policy, run_dir) if video else None
        if video_path:
            echo(f"video: {video_path}")
    rows = [row for row in read_metrics(run_dir) if "mean_return" in row]
    at_90 = next((row for row in rows
                  if row["mean_episode_length"] >= 0.9 * task.max_episode_length), None)
    plot_curves(rows, run_dir / "curves.png", f"unisim {task_name}: rsl_rl PPO",
                task.max_episode_length)
    result = RunResult(
        run_dir=str(run_dir), task=task_name, worker=worker, num_envs=num_envs,
        iterations=iterations, wall_s=round(wall, 1),
        final_mean_return=rows[-1]["mean_return"] if rows else float("nan"),
        final_mean_episode_length=rows[-1]["mean_episode_length"] if rows else float("nan"),
        max_episode_length=task.max_episode_length, eval_return=eval_return,
        eval_episode_length=eval_length,
        iteration_at_90pct=at_90["iteration"] + 1 if at_90 else None,
        seconds_at_90pct=at_90["wall_s"] if at_90 else None,
        checkpoint=str(run_dir / f"model_{runner.current_learning_iteration}.pt"),
        video=str(video_path) if video_path else None, randomized=randomize)
    (run_dir / "summary.json").write_text(json.dumps(asdict(result), indent=2) + "\n")
    return result


def act(task: Task, policy: Policy, observations: torch.Tensor) -> torch.Tensor:
    """The policy's deterministic actions for ``observations``."""
    with torch.inference_mode():
        return policy(TensorDict({"policy": observations}, batch_size=[task.num_envs]))


def evaluate(task: Task, policy: Policy) -> tuple[float, float]:
    """Mean return and length of one deterministic episode per env, from fresh starts."""
    observations = task.reset()
    returns = torch.zeros(task.num_envs)
    lengths = torch.zeros(task.num_envs)
    running = torch.ones(task.num_envs, dtype=torch.bool)
    for _ in range(task.max_episode_length):
        step = task.step(act(task, policy, observations))
        returns += step.rewards.cpu() * running
        lengths += running
        running &= ~step.done.cpu()
        observations = step.observations
        if not bool(running.any()):
            break
    task.reset()
    return round(float(returns.mean()), 2), round(float(lengths.mean()), 1)


def record(task: Task, policy: Policy, run_dir: Path, stride: int = 2) -> Path:
    """``policy.mp4``: env 0 under ``policy`` for one episode's worth of steps (a fall
    starts a new episode), one frame every ``stride`` control steps, in real time."""
    from ..video import VideoRecorder

    observations = task.reset()
    fps = 1.0 / (task.step_dt * stride)
    with VideoRecorder(run_dir / "policy.mp4", task.sim, camera=task.camera, fps=fps) as video:
        video.capture()
        for i in range(1, task.max_episode_length + 1):
            step = task.step(act(task, policy, observations))
            observations = task.reset(step.done) if bool(step.done.any()) else step.observations
            if i % stride == 0:
                video.capture()
    return video.path


def summary_lines(result: RunResult) -> list[str]:
    """What the command prints at the end."""
    fields: dict[str, Any] = asdict(result)
    return [f"{key:>26}: {value}" for key, value in fields.items()]
