"""The task layer over a real MuJoCo worker: shapes, episode ends, resets, seeding."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import unisim
from unisim.tasks import Task, make, register, task_class
from unisim.tasks.cartpole import Cartpole
from unisim.tasks.quadruped import rotate_inverse


class ShortCartpole(Cartpole):
    max_episode_length = 5


@pytest.fixture
def cartpole() -> Task:
    with unisim.make("cartpole", num_envs=8, seed=3) as task:
        yield task


def test_import_unisim_does_not_import_the_training_stack() -> None:
    code = ("import sys, unisim; heavy = {'torch', 'rsl_rl', 'tensordict', 'gymnasium'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("name", "num_obs", "num_actions"),
                         [("cartpole", 5, 1), ("quadruped", 36, 8)])
def test_shapes_dtypes_and_devices(name: str, num_obs: int, num_actions: int) -> None:
    with make(name, num_envs=4) as task:
        assert (task.num_observations, task.num_actions) == (num_obs, num_actions)
        obs = task.reset()
        assert obs.shape == (4, num_obs) and obs.dtype == torch.float32
        step = task.step(torch.zeros(4, num_actions))
        for value, shape, dtype in [(step.observations, (4, num_obs), torch.float32),
                                    (step.rewards, (4,), torch.float32),
                                    (step.terminated, (4,), torch.bool),
                                    (step.truncated, (4,), torch.bool)]:
            assert value.shape == shape and value.dtype == dtype
            assert value.device == task.device == torch.device("cpu")
        assert torch.isfinite(step.observations).all()


def test_state_views_are_zero_copy(cartpole: Task) -> None:
    assert np.shares_memory(cartpole.qpos.numpy(), cartpole.sim.qpos)
    before = cartpole.qpos.clone()
    cartpole.step(torch.ones(8, 1))
    assert not torch.equal(before, cartpole.qpos)  # the worker wrote into our view


def test_termination_is_not_a_time_out(cartpole: Task) -> None:
    """With no push the pole falls: terminated, and never truncated in the same step."""
    terminated_seen = torch.zeros(8, dtype=torch.bool)
    for _ in range(cartpole.max_episode_length):
        step = cartpole.step(torch.zeros(8, 1))
        assert not (step.terminated & step.truncated).any()
        terminated_seen |= step.terminated
        if step.done.any():
            cartpole.reset(step.done)
    assert terminated_seen.all()


def test_time_out_after_max_episode_length() -> None:
    with ShortCartpole(4, seed=0) as task:
        for i in range(1, 6):
            step = task.step(torch.zeros(4, 1))
            assert not step.terminated.any()  # 5 steps (0.1 s) are too few to fall
            assert step.truncated.all() == (i == 5)
        assert step.log["Episode_Reward/alive"] == pytest.approx(5.0)
        assert step.log["Episode_Termination/terminated"] == 0.0


def test_reset_touches_only_the_given_envs(cartpole: Task) -> None:
    for _ in range(3):
        cartpole.step(torch.full((8, 1), 0.5))
    mask = torch.tensor([True, False, True, False, False, False, False, True])
    qpos, lengths = cartpole.qpos.clone(), cartpole.episode_length_buf.clone()
    obs_before = cartpole.observations().float()
    obs = cartpole.reset(mask)
    assert torch.equal(cartpole.qpos[~mask], qpos[~mask])
    assert torch.equal(obs[~mask], obs_before[~mask])
    assert torch.equal(cartpole.episode_length_buf[~mask], lengths[~mask])
    assert (cartpole.episode_length_buf[mask] == 0).all()
    assert not torch.equal(cartpole.qpos[mask], qpos[mask])
    assert (cartpole.qpos[mask, 1].abs() <= 0.4).all()  # Cartpole's start distribution
    cartpole.reset(torch.tensor([5]))  # indices work too
    assert cartpole.episode_length_buf[5] == 0


def test_same_seed_same_rollout_other_seed_other_rollout() -> None:
    def rollout(seed: int) -> list[torch.Tensor]:
        actions = torch.Generator().manual_seed(99)
        with make("cartpole", num_envs=6, seed=seed) as task:
            frames = [task.reset()]
            for _ in range(60):
                step = task.step(torch.rand(6, 1, generator=actions) * 2 - 1)
                frames.append(task.reset(step.done) if step.done.any() else step.observations)
            return frames

    first, again, other = rollout(7), rollout(7), rollout(8)
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not torch.equal(first[0], other[0])


def test_steps_under_inference_mode_leave_the_task_usable(cartpole: Task) -> None:
    """rsl_rl collects rollouts under torch.inference_mode, then resets outside it."""
    with torch.inference_mode():
        cartpole.step(torch.ones(8, 1))
    cartpole.reset(torch.tensor([0, 1]))
    cartpole.step(torch.ones(8, 1))
    assert cartpole.episode_length_buf.tolist() == [1, 1, 2, 2, 2, 2, 2, 2]


def test_actions_are_clipped_and_checked(cartpole: Task) -> None:
    cartpole.step(torch.full((8, 1), 100.0))
    assert (cartpole.actions == 1.0).all()
    assert np.all(cartpole.sim.ctrl == 1.0)  # mapped onto the actuator's ctrl range
    with pytest.raises(ValueError, match=r"shape \(8, 1\)"):
        cartpole.step(torch.zeros(8, 2))
    with pytest.raises(ValueError, match="NaN"):
        cartpole.step(torch.full((8, 1), float("nan")))
    with pytest.raises(IndexError, match=r"\[0, 8\)"):
        cartpole.reset([8])
    with pytest.raises(TypeError, match="integers or a boolean mask"):
        cartpole.reset(torch.tensor([0.5]))


def test_unknown_task_names_the_registered_ones() -> None:
    with pytest.raises(ValueError, match="cartpole, quadruped"):
        make("hopper")


def test_register_a_task_class() -> None:
    register("short-cartpole", ShortCartpole)
    try:
        assert task_class("short-cartpole") is ShortCartpole
    finally:
        from unisim.tasks import TASKS

        del TASKS["short-cartpole"]


def test_a_task_class_by_import_path() -> None:
    assert task_class("unisim.tasks.cartpole:Cartpole") is Cartpole
    with pytest.raises(TypeError, match="not a Task subclass"):
        task_class("unisim.tasks.quadruped:rotate_inverse")


def test_quadruped_starts_standing_and_falls_when_flipped() -> None:
    with make("quadruped", num_envs=2, seed=0) as task:
        gravity = task.projected_gravity()
        assert torch.allclose(gravity, torch.tensor([[0.0, 0.0, -1.0]] * 2, dtype=torch.float64),
                              atol=1e-6)
        upside_down = task.default_qpos.repeat(2, 1)
        upside_down[:, 3:7] = torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=torch.float64)
        task.sim.reset(None, qpos=upside_down)
        assert task.terminated().all()


def test_rotate_inverse_matches_a_rotation_matrix() -> None:
    angle = 0.7  # about z: world x seen from the body is rotated by -angle
    quat = torch.tensor([[np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2)]], dtype=torch.float64)
    body = rotate_inverse(quat, torch.tensor([[1.0, 0.0, 0.0]], dtype=torch.float64))
    assert torch.allclose(body, torch.tensor([[np.cos(angle), -np.sin(angle), 0.0]],
                                             dtype=torch.float64))


def test_close_stops_the_worker() -> None:
    task = make("cartpole", num_envs=2)
    pid = task.sim.worker_pid
    last = task.qpos.clone()
    task.close()
    task.close()
    assert torch.equal(task.qpos, last)  # still readable: a copy, not the released memory
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(unisim.BackendDead):
        task.step(torch.zeros(2, 1))
