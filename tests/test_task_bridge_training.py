"""rsl_rl 5.x PPO on the 3.11 host trains the CI tasks in a Python 3.8 worker on the SDK fake.

Both tasks are our own, written in the style of IsaacGymEnvs (the ant: MJCF, efforts under
DOF_MODE_NONE) and legged_gym (a URDF quadruped: PD torques clipped by effort limits,
pushes, base-contact resets, a task registry). Seeds are fixed and episodes start at step 0
(no random episode lengths), so every episode's return measures the policy of its time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from unisim.task_bridge import BridgedTask
from unisim.task_bridge.train import train

from .task_bridge_support import ANT, EXAMPLES, ant_cfg


def rises(rows: list[dict[str, Any]], margin: float) -> tuple[float, float]:
    """The first and last mean returns, checked to be there and to differ by ``margin``
    of the first's size at least."""
    returns = [row["mean_return"] for row in rows]
    assert len(returns) >= 5, rows
    first, last = returns[0], returns[-1]
    assert last > first + margin * abs(first), returns
    return first, last


def test_ppo_trains_the_isaacgymenvs_style_ant(isaacgym_fake_python: str,
                                                tmp_path: Path) -> None:
    with BridgedTask(ANT, 64, style="vec_task", cfg=ant_cfg(episode_length=50),
                     paths=[EXAMPLES], python=isaacgym_fake_python) as task:
        rows = train(task, 8, tmp_path, hidden_dims=(64, 64), random_start=False)
    rises(rows, 0.25)
    assert (tmp_path / "curves.png").stat().st_size > 10_000


def test_ppo_trains_the_legged_gym_style_quadruped(isaacgym_fake_python: str,
                                                   tmp_path: Path) -> None:
    with BridgedTask("ci_quadruped", 64, style="legged_gym",
                     registry="isaacgym_tasks.legged:task_registry",
                     overrides={"env.episode_length_s": 1.0}, paths=[EXAMPLES],
                     python=isaacgym_fake_python) as task:
        assert (task.num_observations, task.num_privileged_observations) == (36, 41)
        assert "rew_tracking_lin_vel" in task.log_names
        rows = train(task, 12, tmp_path, hidden_dims=(64, 64), random_start=False)
    rises(rows, 0.2)
    assert any("Episode_Extras/rew_tracking_lin_vel" in row for row in rows)
