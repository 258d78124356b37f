"""Train the task bridge's CI tasks and publish their learning curves.

    python tools/figures/task_bridge_figures.py   # both tasks, 64 envs each (a few min, 2 cores)

Each task runs unmodified in a Python 3.8 worker on the IsaacGym SDK fake and is trained by
rsl_rl 5.x PPO on this interpreter through ``unisim.task_bridge`` (the ant in IsaacGymEnvs'
style, the quadruped in legged_gym's; examples/isaacgym_tasks). Seeds are fixed and every
episode starts at step 0, so each return measures the policy of its iteration. Writes
docs/figures/task-bridge-<task>.png and the table (figures:task-bridge-training) in
docs/bring-your-isaacgym-task.md.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from doc_figures import ROOT, publish, stamp
from unisim.interpreter import find_python38
from unisim.task_bridge import BridgedTask
from unisim.task_bridge.train import train
from unisim.testing import isaacgym_fake_python

EXAMPLES = ROOT / "examples"
COMMAND = "python tools/figures/task_bridge_figures.py"
NUM_ENVS = 64


def tasks(python: str) -> dict[str, tuple[Callable[[], BridgedTask], int]]:
    """How to start each CI task, and its PPO iterations."""
    cfg = json.loads((EXAMPLES / "isaacgym_tasks" / "cfg" / "ant.json").read_text())
    cfg["env"]["episodeLength"] = 100
    return {
        "ant": (lambda: BridgedTask("isaacgym_tasks.ant:Ant", NUM_ENVS, style="vec_task",
                                    cfg=cfg, paths=[EXAMPLES], python=python), 40),
        "quadruped": (lambda: BridgedTask("ci_quadruped", NUM_ENVS, style="legged_gym",
                                          registry="isaacgym_tasks.legged:task_registry",
                                          overrides={"env.episode_length_s": 2.0},
                                          paths=[EXAMPLES], python=python), 40),
    }


def table(runs: dict[str, dict[str, Any]]) -> str:
    rows = [f"{stamp()}; {NUM_ENVS} envs per task, seed 0",
            "",
            "| task (style) | PPO iterations | first mean return | last mean return | "
            "training wall time |",
            "| --- | --- | --- | --- | --- |"]
    for name, run in runs.items():
        returns = [row["mean_return"] for row in run["rows"]]
        rows.append(f"| {name} ({run['style']}) | {run['iterations']} | {returns[0]:.2f} | "
                    f"{returns[-1]:.2f} | {run['rows'][-1]['wall_s']:.0f} s |")
    rows += ["", "![ant](figures/task-bridge-ant.png)",
             "![quadruped](figures/task-bridge-quadruped.png)"]
    return "\n".join(rows)


def main() -> int:
    base, said = find_python38()
    print(said)
    python = isaacgym_fake_python(base or sys.executable)
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="unisim-task-bridge-") as out:
        for name, (start, iterations) in tasks(python).items():
            with start() as task:
                rows = train(task, iterations, Path(out) / name, hidden_dims=(64, 64),
                             random_start=False, title=name)
                runs[name] = {"style": task.options["style"], "iterations": iterations,
                              "num_envs": task.num_envs, "rows": rows}
            shutil.copyfile(Path(out) / name / "curves.png",
                            ROOT / "docs" / "figures" / f"task-bridge-{name}.png")
    publish("task-bridge-training", table(runs), runs, COMMAND)
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
