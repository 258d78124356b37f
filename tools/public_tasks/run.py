"""Public IsaacGym tasks, unmodified, through the task bridge: check, then a short training.

    MUJOCO_GL=egl python -m tools.public_tasks.run --legged-gym ~/legged_gym \\
        --isaacgymenvs ~/IsaacGymEnvs --python ~/venv38/bin/python [--publish]

Tasks: legged_gym's ``anymal_c_flat`` and ``a1`` (by its task registry) and IsaacGymEnvs'
``Ant`` (by class, its Hydra config resolved to JSON by ``isaacgymenvs_cfg.py`` on the
worker's interpreter). Each runs the two commands of docs/bring-your-isaacgym-task.md as a
user types them, ``python -m unisim task check`` and ``python -m unisim task train``, in
subprocesses, with the checkout on ``--path``: nothing of the public code is copied or
changed. ``--python`` is a Python 3.8 with what the projects import (legged_gym: rsl_rl,
scipy; IsaacGymEnvs: hydra-core, gym, rl-games, ...); it gets the SDK fake
(``unisim.testing.isaacgym_fake_python``) unless ``--sdk`` says it has IsaacGym itself.
Prints a table; ``--publish`` writes it into docs/bring-your-isaacgym-task.md ("Tested on
public tasks"). Asserts nothing about the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tools.figures.doc_figures import invocation, publish, stamp
from unisim import split
from unisim.testing import isaacgym_fake_python

HERE = Path(__file__).resolve().parent
REGISTRY = "legged_gym.envs:task_registry"
SIZES = re.compile(r"(\d+) envs, (\d+) observations, (\d+) privileged, (\d+) actions")
STEPS = re.compile(r"100 steps of random actions: ([0-9.]+) s")


@dataclass
class Task:
    """One public task: the ``task`` argument and the options that name its code."""

    label: str
    name: str
    options: list[str]


@dataclass
class Outcome:
    """What ``check`` and ``train`` printed and wrote for one task."""

    label: str
    sizes: list[int] = field(default_factory=list)  # observations, privileged, actions
    steps_per_s: float = 0.0  # env steps per second, check's 100 steps of random actions
    seconds_per_iteration: float = 0.0  # median wall time of a PPO iteration
    returns: list[float] = field(default_factory=list)  # mean return, iterations with ends
    failure: str = ""  # the failing command's last line of output


def unisim(arguments: list[str]) -> tuple[bool, str]:
    """``python -m unisim task ...`` on this interpreter: whether it succeeded, its output."""
    done = subprocess.run([sys.executable, "-m", "unisim", "task", *arguments],
                          capture_output=True, text=True, timeout=3600)
    return done.returncode == 0, done.stdout + done.stderr


def last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def run(task: Task, python: str, num_envs: int, iterations: int, out: Path) -> Outcome:
    """``check``, then ``train`` for ``iterations`` PPO iterations, of ``task``."""
    outcome = Outcome(task.label)
    common = [task.name, *task.options, "--python", python, "--num-envs", str(num_envs)]
    ok, output = unisim(["check", *common])
    sizes, steps = SIZES.search(output), STEPS.search(output)
    if not ok or sizes is None or steps is None:
        outcome.failure = "check: " + last_line(output)
        return outcome
    outcome.sizes = [int(v) for v in sizes.groups()[1:]]
    outcome.steps_per_s = 100 * num_envs / float(steps.group(1))
    runs = out / task.label
    ok, output = unisim(["train", *common, "--iterations", str(iterations), "--out", str(runs)])
    folders = sorted(runs.glob("task-*"))
    if not ok or not folders:
        outcome.failure = "train: " + last_line(output)
        return outcome
    rows = [json.loads(line) for line in (folders[-1] / "metrics.jsonl").read_text().splitlines()]
    walls = [row["wall_s"] for row in rows]
    outcome.seconds_per_iteration = statistics.median(
        b - a for a, b in zip([0.0, *walls], walls, strict=False))
    outcome.returns = [row["mean_return"] for row in rows if "mean_return" in row]
    return outcome


def tasks(legged_gym: Path | None, isaacgymenvs: Path | None, base: str,
          folder: Path) -> list[Task]:
    """The tasks of the checkouts given; IsaacGymEnvs' Ant config resolved into ``folder``."""
    found = []
    if legged_gym is not None:
        options = ["--registry", REGISTRY, "--path", str(legged_gym)]
        found += [Task(f"legged_gym {name}", name, options) for name in ("anymal_c_flat", "a1")]
    if isaacgymenvs is not None:
        cfg = folder / "Ant.json"
        resolved = subprocess.run([base, str(HERE / "isaacgymenvs_cfg.py"), str(isaacgymenvs),
                                   "Ant"], capture_output=True, text=True, check=True)
        cfg.write_text(resolved.stdout)
        found.append(Task("IsaacGymEnvs Ant", "isaacgymenvs.tasks.ant:Ant",
                          ["--style", "vec_task", "--cfg", str(cfg), "--path",
                           str(isaacgymenvs)]))
    return found


def table(outcomes: list[Outcome], iterations: int) -> list[str]:
    lines = ["| task | observations, privileged, actions | env steps/s (check) "
             f"| s per PPO iteration | mean return, first → last of {iterations} iterations |",
             "| --- | --- | --- | --- | --- |"]
    for o in outcomes:
        if o.failure:
            lines.append(f"| {o.label} | failed: {o.failure.replace('|', '/')} | | | |")
            continue
        returns = (f"{o.returns[0]:.2f} → {o.returns[-1]:.2f}" if o.returns
                   else "no episode ended")
        lines.append(f"| {o.label} | {', '.join(map(str, o.sizes))} | {o.steps_per_s:.0f} "
                     f"| {o.seconds_per_iteration:.1f} | {returns} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--legged-gym", type=Path, help="a legged_gym checkout")
    parser.add_argument("--isaacgymenvs", type=Path, help="an IsaacGymEnvs checkout")
    parser.add_argument("--python", required=True, help="the worker's Python 3.8, with the "
                        "projects' dependencies")
    parser.add_argument("--sdk", action="store_true", help="--python has IsaacGym itself "
                        "(default: it is given the SDK fake)")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--publish", action="store_true",
                        help="write the table into docs/bring-your-isaacgym-task.md")
    args = parser.parse_args()
    if args.legged_gym is None and args.isaacgymenvs is None:
        parser.error("give --legged-gym, --isaacgymenvs or both")
    worker = args.python if args.sdk else isaacgym_fake_python(args.python)
    with tempfile.TemporaryDirectory(prefix="unisim-public-tasks-") as name:
        folder = Path(name)
        outcomes = []
        for task in tasks(args.legged_gym, args.isaacgymenvs, args.python, folder):
            print(f"{task.label}: check, then {args.iterations} PPO iterations", flush=True)
            outcomes.append(run(task, worker, args.num_envs, args.iterations, folder))
    sdk = "IsaacGym" if args.sdk else "the SDK fake"
    lines = [f"{stamp()}; {split.cores()} cores; {args.num_envs} envs per task; the worker on "
             f"{sdk}, the CPU pipeline", "", *table(outcomes, args.iterations)]
    print("\n".join(lines))
    if args.publish:
        data = {"num_envs": args.num_envs, "iterations": args.iterations, "sdk": args.sdk,
                "mujoco_gl": os.environ.get("MUJOCO_GL", ""),
                "outcomes": [asdict(o) for o in outcomes]}
        print(publish("public-tasks", "\n".join(lines) + "\n", data, invocation()))
    return 1 if any(o.failure for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
