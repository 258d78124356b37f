"""Public IsaacGym tasks, unmodified, through the task bridge: check, then a training.

    MUJOCO_GL=egl python -m tools.public_tasks.run --legged-gym ~/legged_gym \\
        --isaacgymenvs ~/IsaacGymEnvs \\
        --project unitree_rl_gym=legged_gym.envs:task_registry=~/unitree_rl_gym \\
        --python ~/venv38/bin/python [--only REGEX] [--publish]

Tasks: every task registered in legged_gym's task registry (and in the registry of each
``--project``, a legged_gym-family project: its label, its ``module:attribute`` registry,
its checkout), and every task of IsaacGymEnvs' ``isaacgym_task_map`` (classes or
resolvers, each config resolved by Hydra to JSON as its ``train.py`` resolves it, by
``isaacgymenvs_cfg.py``, from the config ``registered.py`` finds for it) less Factory and
IndustReal, which collide through SDFs the fake
does not have. The lists are read from the projects on the worker's interpreter
(``registered.py``). Each task runs the two commands of docs/bring-your-isaacgym-task.md
as a user types them, ``python -m unisim task check`` and ``python -m unisim task train``,
in subprocesses, with the checkout on ``--path``: nothing of the public code is copied or
changed. ``--python`` is a Python 3.8 with what the projects import (envs/public-tasks38.txt);
it gets the SDK fake (``unisim.testing.isaacgym_fake_python``) unless ``--sdk`` says it
has IsaacGym itself. The default training, 42 PPO iterations of 24 steps, is 1,008 steps
per env: past legged_gym's push interval (750 steps) and episode length (1,000), with the
resets of random starts and falls on the way. Prints a table, each task with its figures
or the last line of the command that failed; ``--publish`` writes it into
docs/bring-your-isaacgym-task.md ("Tested on public tasks"). Asserts nothing about the
figures.
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
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tools.figures.doc_figures import invocation, publish, stamp
from unisim import split
from unisim.task_bridge.train import STEPS_PER_ENV
from unisim.testing import isaacgym_fake_python

HERE = Path(__file__).resolve().parent
REGISTRY = "legged_gym.envs:task_registry"
LEFT_OUT = ("Factory", "IndustReal")  # IsaacGymEnvs tasks that need SDF collisions
NOT_RUN = "not run:"
NO_OUTPUT = "no output"
WORKER_TIMEOUT = 600  # s a worker may take to build a task (terrain, meshes) on a busy machine
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


def unisim(arguments: list[str], timeout: float) -> tuple[bool, str]:
    """``python -m unisim task ...`` on this interpreter: whether it succeeded, its output."""
    try:
        done = subprocess.run([sys.executable, "-m", "unisim", "task", *arguments],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"not done after {timeout:.0f} s (--timeout)"
    return done.returncode == 0, done.stdout + done.stderr


SDK_ERROR = "[isaacgym fake] Error:"
EXCEPTION = re.compile(r"^(unisim task: .*|[A-Za-z_][\w.]*(Error|Exception|Exit)(: .*)?)$")


def last_line(output: str) -> str:
    """Why a command failed: its last exception line (a traceback's last line, or the
    ``unisim task:`` error), else its last line of output; with the SDK's (or the fake's)
    last error report, which often says why (a ``load_asset`` that returned None)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    reasons = [line for line in lines if EXCEPTION.match(line)]
    reason = reasons[-1] if reasons else lines[-1] if lines else NO_OUTPUT
    reports = [line for line in lines if line.startswith(SDK_ERROR)]
    if reports and reports[-1] != reason:
        reason += f" (after: {reports[-1]})"
    return reason


def run(task: Task, python: str, num_envs: int, iterations: int, out: Path,
        timeout: float) -> Outcome:
    """``check``, then ``train`` for ``iterations`` PPO iterations, of ``task``."""
    outcome = Outcome(task.label)
    common = [task.name, *task.options, "--python", python, "--num-envs", str(num_envs),
              "--timeout", str(WORKER_TIMEOUT)]
    ok, output = unisim(["check", *common], timeout)
    sizes, steps = SIZES.search(output), STEPS.search(output)
    if not ok or sizes is None or steps is None:
        outcome.failure = "check: " + last_line(output)
        return outcome
    outcome.sizes = [int(v) for v in sizes.groups()[1:]]
    outcome.steps_per_s = 100 * num_envs / float(steps.group(1))
    runs = out / task.label.replace(" ", "-")
    ok, output = unisim(["train", *common, "--iterations", str(iterations), "--out", str(runs)],
                        timeout)
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


@dataclass
class Project:
    """A legged_gym-family project: its label, task registry and checkout."""

    label: str
    registry: str
    checkout: Path


def project(text: str) -> Project:
    """``--project LABEL=module:attribute=PATH``."""
    parts = text.split("=")
    if len(parts) != 3 or parts[1].count(":") != 1:
        raise argparse.ArgumentTypeError(
            f"--project takes LABEL=module:attribute=PATH (a legged_gym task registry), "
            f"got {text!r}")
    return Project(parts[0], parts[1], Path(parts[2]).expanduser())


def listed(base: str, *arguments: str) -> Any:
    """What ``registered.py`` prints for ``arguments`` on the worker's interpreter."""
    done = subprocess.run([base, str(HERE / "registered.py"), *arguments],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"listing the tasks of {arguments[1]} failed: {last_line(done.stderr)}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def tasks(projects: list[Project], isaacgymenvs: Path | None, worker: str, base: str,
          folder: Path) -> tuple[list[Task], list[str]]:
    """The tasks of the checkouts given, and the IsaacGymEnvs tasks left out; each
    IsaacGymEnvs config resolved into ``folder`` (on ``base``, which has Hydra)."""
    found = []
    for one in projects:
        options = ["--registry", one.registry, "--path", str(one.checkout)]
        names = listed(worker, "registry", str(one.checkout), one.registry)
        found += [Task(f"{one.label} {name}", name, options) for name in names]
    left_out = []
    if isaacgymenvs is not None:
        for name, (target, config) in listed(worker, "isaacgymenvs",
                                             str(isaacgymenvs)).items():
            if name.startswith(LEFT_OUT) or config is None:
                left_out.append(name if config else f"{name} (no config)")
                continue
            cfg = folder / f"{name}.json"
            resolved = subprocess.run([base, str(HERE / "isaacgymenvs_cfg.py"),
                                       str(isaacgymenvs), config], capture_output=True,
                                      text=True, check=True)
            cfg.write_text(resolved.stdout)
            found.append(Task(f"IsaacGymEnvs {name}", target,
                              ["--style", "vec_task", "--cfg", str(cfg), "--path",
                               str(isaacgymenvs)]))
    return found, left_out


def table(outcomes: list[Outcome], iterations: int) -> list[str]:
    lines = ["| task | observations, privileged, actions | env steps/s (check) "
             f"| s per PPO iteration | mean return, first → last of {iterations} iterations "
             f"({iterations * STEPS_PER_ENV} steps per env) |",
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
    parser.add_argument("--project", type=project, action="append", default=[],
                        help="another legged_gym-family project: LABEL=module:attribute=PATH "
                        "(its task registry, its checkout)")
    parser.add_argument("--python", required=True, help="the worker's Python 3.8, with the "
                        "projects' dependencies")
    parser.add_argument("--sdk", action="store_true", help="--python has IsaacGym itself "
                        "(default: it is given the SDK fake)")
    parser.add_argument("--only", default="", help="run only the tasks whose label (e.g. "
                        "'IsaacGymEnvs Ant') this regular expression finds")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--iterations", type=int, default=42)
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds each command of a task may take")
    parser.add_argument("--budget", type=float, default=0.0,
                        help="seconds after which no further task starts (0: none); the "
                        "tasks left are listed as not run")
    parser.add_argument("--save", type=Path, help="also write the outcomes to this JSON file")
    parser.add_argument("--merge", type=Path, nargs="+", default=[],
                        help="run nothing: print (and --publish) the table of the outcomes "
                        "these --save files hold, in this order (runs made side by side)")
    parser.add_argument("--publish", action="store_true",
                        help="write the table into docs/bring-your-isaacgym-task.md")
    args = parser.parse_args()
    if args.merge:
        return report(*merged(args.merge), args.publish)
    projects = list(args.project)
    if args.legged_gym is not None:
        projects.insert(0, Project("legged_gym", REGISTRY, args.legged_gym))
    if not projects and args.isaacgymenvs is None:
        parser.error("give --legged-gym, --isaacgymenvs or --project")
    worker = args.python if args.sdk else isaacgym_fake_python(args.python)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="unisim-public-tasks-") as name:
        folder = Path(name)
        found, left_out = tasks(projects, args.isaacgymenvs, worker, args.python, folder)
        outcomes = []
        for task in [t for t in found if re.search(args.only, t.label)]:
            if args.budget and time.monotonic() - start > args.budget:
                outcomes.append(Outcome(task.label, failure=f"{NOT_RUN} the run's --budget "
                                        f"of {args.budget:.0f} s was spent"))
                continue
            print(f"{task.label}: check, then {args.iterations} PPO iterations", flush=True)
            outcomes.append(run(task, worker, args.num_envs, args.iterations, folder,
                                args.timeout))
            print(f"  {outcomes[-1].failure or 'done'}", flush=True)
    data = {"num_envs": args.num_envs, "iterations": args.iterations, "sdk": args.sdk,
            "steps_per_env": args.iterations * STEPS_PER_ENV,
            "mujoco_gl": os.environ.get("MUJOCO_GL", ""), "left_out": left_out,
            "outcomes": [asdict(o) for o in outcomes]}
    if args.save:
        args.save.write_text(json.dumps(data, indent=1))
    return report(data, 1, args.publish)


def merged(paths: list[Path]) -> tuple[dict[str, Any], int]:
    """The saved runs as one (their settings must agree), and how many runs they were."""
    runs = [json.loads(path.read_text()) for path in paths]
    settings = ("num_envs", "iterations", "sdk", "steps_per_env", "mujoco_gl")
    for path, one in zip(paths, runs, strict=True):
        if any(one[key] != runs[0][key] for key in settings):
            raise SystemExit(f"{path} was run with other settings than {paths[0]}")
    data = {key: runs[0][key] for key in settings}
    data["left_out"] = list(dict.fromkeys(name for one in runs for name in one["left_out"]))
    def rank(outcome: dict[str, Any]) -> int:
        """A task in several runs: done first, then failed, then never run (a command that
        printed nothing, stopped before it began, did not run it either)."""
        failure = outcome["failure"]
        return 0 if not failure else 2 if failure.startswith(NOT_RUN) or failure.endswith(
            NO_OUTPUT) else 1

    chosen: dict[str, dict[str, Any]] = {}  # of equal rank, the later run's
    for outcome in (outcome for one in runs for outcome in one["outcomes"]):
        if outcome["label"] not in chosen or rank(outcome) <= rank(chosen[outcome["label"]]):
            chosen[outcome["label"]] = outcome
    data["outcomes"] = list(chosen.values())
    return data, len(runs)


def report(data: dict[str, Any], runs: int, publish_it: bool) -> int:
    """Print the table of ``data`` (the outcomes of ``runs`` runs); publish it if asked."""
    outcomes = [Outcome(**o) for o in data["outcomes"]]
    sdk = "IsaacGym" if data["sdk"] else "the SDK fake"
    side = f"; {runs} runs side by side" if runs > 1 else ""
    lines = [f"{stamp()}; {split.cores()} cores{side}; {data['num_envs']} envs per task; the "
             f"worker on {sdk}, the CPU pipeline", "", *table(outcomes, data["iterations"])]
    if data["left_out"]:
        lines += ["", "Left out: " + ", ".join(data["left_out"]) + " (Factory and IndustReal "
                  "collide through SDFs, which the fake does not have)"]
    print("\n".join(lines))
    if publish_it:
        print(publish("public-tasks", "\n".join(lines) + "\n", data, invocation()))
    return 1 if any(o.failure for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
