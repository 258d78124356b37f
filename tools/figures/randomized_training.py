"""docs/training.md's randomisation section: the quadruped trained with and without physics
randomisation, and both policies rolled out on low- and high-friction floors.

Reads two run folders of ``python -m unisim train quadruped [--randomize]``, writes
``docs/figures/quadruped-randomized.png`` (the two learning curves),
``docs/figures/quadruped-friction.png`` (forward distance over an episode at friction 0.3
and 1.25, each policy, mean of 64 envs), the section between the
``<!-- figures:randomized-training:... -->`` markers of docs/training.md, and its result
file docs/results/randomized-training.json (tools/figures/doc_figures.py's ``publish``).

    python tools/figures/randomized_training.py runs/quadruped-2026... \
        runs/quadruped-randomized-2026...
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import torch

from doc_figures import publish  # this folder's
from unisim.physics_randomization import PhysicsRandomization, Uniform, friction
from unisim.tasks import make
from unisim.tasks.quadruped import BODIES
from unisim.training.progress import read_metrics

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "docs" / "figures"
FRICTIONS = (0.3, 1.25)  # the ends of the training range (the model's friction is 1)
ENVS = 64


def load_policy(run_dir: Path, python: str | None) -> Any:
    """The last checkpoint's deterministic policy, on a small stand-in env."""
    from rsl_rl.runners import OnPolicyRunner

    from unisim.integrations.rsl_rl import RslRlVecEnv
    from unisim.training.configs import RECIPES, runner_config

    summary = json.loads((run_dir / "summary.json").read_text())
    with make("quadruped", 2, python=python) as task:
        config = runner_config(RECIPES["quadruped"], summary["iterations"],
                               {"class_name": "unisim.training.progress:ProgressWriter"})
        with contextlib.redirect_stdout(io.StringIO()):  # it prints the networks
            runner = OnPolicyRunner(RslRlVecEnv(task), config, log_dir=None, device="cpu")
        runner.load(summary["checkpoint"])
        return runner.get_inference_policy()


def rollout(policy: Any, mu: float, python: str | None) -> dict[str, Any]:
    """One deterministic episode per env on a floor (and robot) of friction ``mu``: the
    torso's mean forward position per step, falls, and the mean return."""
    from unisim.training.run import act

    spec = PhysicsRandomization(parameters=(friction(Uniform(mu, mu), bodies=BODIES),))
    with make("quadruped", ENVS, python=python, seed=1, randomize=spec) as task:
        observations = task.reset()
        x0 = task.qpos[:, 0].clone()
        alive = torch.ones(ENVS, dtype=torch.bool)
        fell = torch.zeros(ENVS, dtype=torch.bool)
        returns = torch.zeros(ENVS)
        distance = torch.zeros(ENVS, dtype=torch.float64)
        curve = []
        for _ in range(task.max_episode_length):
            step = task.step(act(task, policy, observations))
            returns += step.rewards * alive
            distance = torch.where(alive, task.qpos[:, 0] - x0, distance)
            fell |= step.terminated & alive
            alive &= ~step.done
            curve.append(round(float(distance.mean()), 4))
            observations = step.observations
    return {"friction": mu, "mean_distance_m": round(float(distance.mean()), 2),
            "fell": round(float(fell.float().mean()), 3),
            "mean_return": round(float(returns.mean()), 1), "distance_curve": curve}


def plot(curves: dict[str, list[dict[str, Any]]], rollouts: dict[str, list[dict[str, Any]]],
         dt: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"unrandomised": "tab:blue", "randomised": "tab:red"}
    figure, (returns, lengths) = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    for name, rows in curves.items():
        iterations = [row["iteration"] + 1 for row in rows]
        returns.plot(iterations, [r["mean_return"] for r in rows], color=colours[name],
                     label=name)
        lengths.plot(iterations, [r["mean_episode_length"] for r in rows],
                     color=colours[name], label=name)
    returns.set(xlabel="PPO iteration", ylabel="mean episode return", title="return")
    lengths.set(xlabel="PPO iteration", ylabel="mean episode length (steps)",
                title="episode length", ylim=(0, 420))
    returns.legend(loc="upper left")
    figure.suptitle("quadruped, rsl_rl PPO: with and without physics randomisation")
    figure.savefig(FIGURES / "quadruped-randomized.png", dpi=100)
    plt.close(figure)

    figure, axis = plt.subplots(figsize=(6.5, 3.6), constrained_layout=True)
    for name, results in rollouts.items():
        for result, style in zip(results, ("--", "-"), strict=True):
            seconds = [dt * (k + 1) for k in range(len(result["distance_curve"]))]
            axis.plot(seconds, result["distance_curve"], style, color=colours[name],
                      label=f"{name} policy, friction {result['friction']}")
    axis.set(xlabel="time (s)", ylabel="mean forward distance (m)",
             title=f"rollouts on low and high friction ({ENVS} envs each)")
    axis.legend(loc="upper left", fontsize=8)
    figure.savefig(FIGURES / "quadruped-friction.png", dpi=100)
    plt.close(figure)


def block_text(summaries: dict[str, dict[str, Any]],
               rollouts: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "| | unrandomised | randomised |", "| --- | --- | --- |",
        "| training wall time | " + " | ".join(
            f"{summaries[n]['wall_s'] / 60:.1f} min" for n in ("unrandomised", "randomised"))
        + " |",
        "| final mean return / episode length | " + " | ".join(
            f"{summaries[n]['final_mean_return']:.1f} / "
            f"{summaries[n]['final_mean_episode_length']:.0f}"
            for n in ("unrandomised", "randomised")) + " |",
    ]
    for k, mu in enumerate(FRICTIONS):
        lines.append(f"| rollout at friction {mu}: distance in 8 s, falls, return | " + " | ".join(
            f"{rollouts[n][k]['mean_distance_m']} m, {rollouts[n][k]['fell']:.0%}, "
            f"{rollouts[n][k]['mean_return']}" for n in ("unrandomised", "randomised"))
            + " |")
    return ("\n".join(lines) + "\n\n![learning curves with and without randomisation]"
            "(figures/quadruped-randomized.png)\n\n![rollouts on low and high friction]"
            "(figures/quadruped-friction.png)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("plain", type=Path, help="run folder of the unrandomised training")
    parser.add_argument("randomized", type=Path, help="run folder of `--randomize`")
    parser.add_argument("--python", default=None, help="worker interpreter for the rollouts")
    args = parser.parse_args()
    runs = {"unrandomised": args.plain, "randomised": args.randomized}
    summaries = {n: json.loads((d / "summary.json").read_text()) for n, d in runs.items()}
    curves = {n: [r for r in read_metrics(d) if "mean_return" in r] for n, d in runs.items()}
    torch.set_num_threads(1)
    rollouts = {}
    for name, run_dir in runs.items():
        policy = load_policy(run_dir, args.python)
        rollouts[name] = [rollout(policy, mu, args.python) for mu in FRICTIONS]
    plot(curves, rollouts, dt=0.02)
    block = block_text(summaries, rollouts)
    print(block)
    command = "python tools/figures/randomized_training.py <plain run> <randomized run>"
    data = {"summaries": summaries, "rollouts": rollouts,
            "curves": {n: [{k: r[k] for k in ("iteration", "mean_return",
                                              "mean_episode_length", "wall_s")} for r in rows]
                       for n, rows in curves.items()}}
    publish("randomized-training", block, data, command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
