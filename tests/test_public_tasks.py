"""Public IsaacGym tasks (legged_gym, IsaacGymEnvs), unmodified, through the task bridge on
the SDK fake: ``tools/public_tasks/run.py`` with two PPO iterations each, for three of
the tasks it covers (``ONLY``).

Needs checkouts that CI has no network to fetch: ``UNISIM_LEGGED_GYM`` and/or
``UNISIM_ISAACGYMENVS`` (their folders) and ``UNISIM_PUBLIC_TASKS_PYTHON`` (a Python 3.8
with envs/worker-mujoco38.txt, worker-torch38.txt and public-tasks38.txt); skipped
otherwise. docs/bring-your-isaacgym-task.md, "Tested on public tasks".
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKOUTS = {"--legged-gym": "UNISIM_LEGGED_GYM", "--isaacgymenvs": "UNISIM_ISAACGYMENVS"}
ONLY = r"^legged_gym (anymal_c_flat|a1)$|^IsaacGymEnvs Ant$"  # CI's few, of all they cover


def test_public_tasks_check_and_train_unmodified_on_the_fake() -> None:
    given = {option: os.environ[name] for option, name in CHECKOUTS.items()
             if os.environ.get(name)}
    python = os.environ.get("UNISIM_PUBLIC_TASKS_PYTHON")
    if not given or not python:
        pytest.skip("no public checkouts: set UNISIM_LEGGED_GYM and/or UNISIM_ISAACGYMENVS "
                    "to a legged_gym / IsaacGymEnvs checkout and UNISIM_PUBLIC_TASKS_PYTHON "
                    "to a Python 3.8 with envs/public-tasks38.txt (CI cannot fetch them)")
    arguments = [part for option, path in given.items() for part in (option, path)]
    done = subprocess.run(
        [sys.executable, "-m", "tools.public_tasks.run", *arguments, "--python", python,
         "--only", ONLY, "--num-envs", "16", "--iterations", "2"], cwd=ROOT,
        capture_output=True, text=True,
        timeout=1800, env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| legged_gym")
            or line.startswith("| IsaacGymEnvs")]
    assert len(rows) == 2 * ("--legged-gym" in given) + ("--isaacgymenvs" in given)
    assert not any("failed" in row for row in rows)
