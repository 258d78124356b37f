"""Train the built-in tasks, publish docs/training.md's figures, ship the demo's walker.

    python tools/figures/training_figures.py   # cartpole twice, quadruped once (~6 min, 2 cores)

Runs ``python -m unisim train``'s own ``train`` with its defaults (seed 0), the cartpole
twice to show what a repeated run gives on one machine. Writes the results table
(figures:training), the learning curves (docs/figures/<task>.png), and the trained
quadruped policy that ``python -m unisim demo`` walks (unisim/models/quadruped_policy.npz,
checked to act exactly as rsl_rl's policy does).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch

from doc_figures import ROOT, publish
from unisim.interpreter import find_python38
from unisim.policy import MlpPolicy, export
from unisim.training.run import RunResult, train

POLICY = ROOT / "unisim" / "models" / "quadruped_policy.npz"
COMMAND = "python tools/figures/training_figures.py"


def ship_policy(result: RunResult) -> None:
    """Export the run's last checkpoint as the demo's policy; check it acts the same."""
    from rsl_rl.models import MLPModel

    saved = torch.load(result.checkpoint, weights_only=False, map_location="cpu")
    state = saved["actor_state_dict"]
    obs_dim = state["obs_normalizer._mean"].shape[-1]
    weights = sorted((k for k in state if k.startswith("mlp.") and k.endswith(".weight")),
                     key=lambda k: int(k.split(".")[1]))
    hidden = [state[k].shape[0] for k in weights[:-1]]
    actions = state[weights[-1]].shape[0]
    obs = {"policy": torch.zeros(1, obs_dim)}
    from tensordict import TensorDict

    model = MLPModel(TensorDict(obs, batch_size=[1]), {"actor": ["policy"]}, "actor", actions,
                     hidden_dims=hidden, activation="elu", obs_normalization=True,
                     distribution_cfg={"class_name": "GaussianDistribution", "init_std": 1.0})
    model.load_state_dict(state)
    model.eval()
    export(model, POLICY)
    probe = torch.randn(64, obs_dim, generator=torch.Generator().manual_seed(0)) * 2.0
    with torch.inference_mode():
        expected = model(TensorDict({"policy": probe}, batch_size=[64])).numpy()
    got = MlpPolicy(POLICY)(probe.numpy())
    error = float(np.abs(got - expected).max())
    if error > 1e-4:
        raise SystemExit(f"the exported policy differs from rsl_rl's by {error}")
    print(f"policy: {POLICY} ({POLICY.stat().st_size // 1024} KiB, max |diff| {error:.1e})")


WORKER_VERSIONS = ("import json, sys, mujoco, numpy; print(json.dumps({'python': "
                   "'%d.%d.%d' % sys.version_info[:3], 'mujoco': mujoco.__version__, "
                   "'numpy': numpy.__version__}))")


def versions(worker_python: str) -> dict[str, Any]:
    """The machine, the trainer's libraries, and the worker's (it runs the physics)."""
    names = ("torch", "rsl-rl-lib", "numpy")
    worker = subprocess.run([worker_python, "-c", WORKER_VERSIONS], capture_output=True,
                            text=True, check=True).stdout
    return {"machine": platform.machine(), "cpus": len(os.sched_getaffinity(0)),
            "cpu": _cpu_model(),
            "host": {"python": platform.python_version(),
                     **{name: metadata.version(name) for name in names}},
            "worker": json.loads(worker)}


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def table(runs: dict[str, list[dict[str, Any]]]) -> str:
    cart, quad = runs["cartpole"], runs["quadruped"][0]

    def seconds(run: dict[str, Any]) -> str:
        return f"{run['wall_s']:.0f} s" if run["wall_s"] < 120 else f"{run['wall_s'] / 60:.1f} min"

    def target(run: dict[str, Any]) -> str:
        if run["iteration_at_90pct"] is None:
            return "not reached"
        return f"iteration {run['iteration_at_90pct']}, {run['seconds_at_90pct']:.0f} s"

    def where(run: dict[str, Any]) -> str:
        return "Python 3.8" if "Python 3.8" in run["worker"] else "the host's interpreter"

    same = all(run["final_mean_return"] == cart[0]["final_mean_return"]
               and run["eval_return"] == cart[0]["eval_return"] for run in cart)
    walltimes = " / ".join(seconds(run) for run in cart)
    rows = [
        "| | cartpole | quadruped |",
        "| --- | --- | --- |",
        f"| PPO iterations, {cart[0]['num_envs']} envs each | {cart[0]['iterations']} | "
        f"{quad['iterations']} |",
        f"| worker | {where(cart[0])} | {where(quad)} |",
        f"| training wall time (varies with load) | {walltimes} ({len(cart)} runs) | "
        f"{seconds(quad)} |",
        f"| mean episode length ≥ 90% of the maximum | {target(cart[0])} | {target(quad)} |",
        f"| final mean return | {cart[0]['final_mean_return']:.2f} | "
        f"{quad['final_mean_return']:.2f} |",
        f"| final mean episode length | {cart[0]['final_mean_episode_length']:.1f} of "
        f"{cart[0]['max_episode_length']} | {quad['final_mean_episode_length']:.1f} of "
        f"{quad['max_episode_length']} |",
        f"| evaluation return / length | {cart[0]['eval_return']:.2f} / "
        f"{cart[0]['eval_episode_length']} | {quad['eval_return']:.2f} / "
        f"{quad['eval_episode_length']} |",
        "",
        f"The {len(cart)} cartpole runs gave "
        + ("**identical** returns, curves and evaluations (all but the wall time)."
           if same else "**different** results: " + ", ".join(
               f"{run['final_mean_return']:.2f}" for run in cart) + "."),
    ]
    return "\n".join(rows)


def main() -> int:
    worker_python, said = find_python38()
    print(said)
    runs: dict[str, list[dict[str, Any]]] = {"cartpole": [], "quadruped": []}
    with tempfile.TemporaryDirectory(prefix="unisim-training-") as out:
        for task in ("cartpole", "cartpole", "quadruped"):
            result = train(task, seed=0, out=out, video=False)
            runs[task].append(asdict(result))
            print(json.dumps(asdict(result)))
            curves = Path(result.run_dir) / "curves.png"
            shutil.copyfile(curves, ROOT / "docs" / "figures" / f"{task}.png")
            if task == "quadruped":
                ship_policy(result)
        for task_runs in runs.values():
            for run in task_runs:
                run["run_dir"] = run["checkpoint"] = run["video"] = None  # temporary paths
    data = {"versions": versions(worker_python or sys.executable), "runs": runs}
    publish("training", table(runs), data, COMMAND)
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
