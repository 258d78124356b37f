"""A user's test file: task code tested against unisim's mock worker (no MuJoCo needed).

Run it with ``pytest docs/examples/test_with_unisim_kit.py`` wherever unisim is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import unisim
from unisim.testing import Fault

# ---- the user's task code (normally in their package) --------------------------------


def forward_reward(qvel: np.ndarray) -> np.ndarray:
    """Reward = forward velocity of each env (qvel column 0)."""
    return qvel[:, 0].copy()


def reset_fallen(sim: unisim.Backend, limit: float) -> np.ndarray:
    """Reset the envs whose qpos[0] left [-limit, limit]; returns the done mask."""
    done = np.abs(sim.qpos[:, 0]) > limit
    if done.any():
        sim.reset(np.flatnonzero(done))
    return done


def rollout(sim: unisim.Backend, ctrl: np.ndarray, steps: int) -> float:
    """Total reward over ``steps``, restarting the simulator if its worker crashes."""
    total = 0.0
    for _ in range(steps):
        try:
            sim.step(ctrl)
        except unisim.WorkerCrashed:
            sim.restart()
            continue
        total += float(forward_reward(sim.qvel).sum())
    return total


# ---- the tests ------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _guard(unisim_leak_guard: None) -> None:
    """Every test here must leave no worker process or shared memory behind."""


def test_reward_matches_the_mock_dynamics(unisim_mock) -> None:
    # Mock physics: qvel[:nu] += ctrl * dt per step, so after 3 steps qvel = 3 * ctrl * dt.
    sim = unisim_mock(num_envs=4, nq=2, nu=2, timestep=0.1)
    ctrl = np.array([[1.0, 0.0], [2.0, 0.0], [-1.0, 0.0], [0.0, 5.0]])
    for _ in range(3):
        sim.step(ctrl)
    np.testing.assert_allclose(forward_reward(sim.qvel), [0.3, 0.6, -0.3, 0.0])


def test_reset_handler_resets_only_the_fallen_envs(unisim_mock) -> None:
    sim = unisim_mock(num_envs=4, nq=2, nu=2, timestep=0.5)
    # qpos[0] after 2 steps of ctrl c: 0.25c + 0.5c = 0.75c
    sim.step([[2.0, 0], [0.1, 0], [-2.0, 0], [0.1, 0]])
    sim.step()
    done = reset_fallen(sim, limit=1.0)
    assert done.tolist() == [True, False, True, False]
    assert np.array_equal(sim.qpos[[0, 2]], np.zeros((2, 2)))      # reset
    np.testing.assert_allclose(sim.qpos[[1, 3], 0], [0.075, 0.075])  # untouched


def test_rollout_survives_a_worker_crash(unisim_mock) -> None:
    sim = unisim_mock(num_envs=2, nq=1, timestep=1.0, faults=[Fault.segfault("STEP", call=3)])
    total = rollout(sim, np.ones((2, 1)), steps=5)
    # steps 1-2 give qvel 1, 2; the crash at step 3 restarts (qvel 0); steps 4-5 give 1, 2
    assert total == 2 * (1 + 2 + 1 + 2)


def test_a_hung_simulator_times_out(unisim_mock) -> None:
    sim = unisim_mock(num_envs=2, timeout=0.5, faults=[Fault.hang("STEP")])
    with pytest.raises(unisim.WorkerTimeout):
        sim.step()
