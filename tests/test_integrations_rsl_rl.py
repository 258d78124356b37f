"""``RslRlVecEnv`` against rsl-rl-lib's own ``VecEnv`` contract."""

from __future__ import annotations

import pytest
import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

import unisim
from unisim.integrations.rsl_rl import RslRlVecEnv
from unisim.tasks.cartpole import Cartpole


class ShortCartpole(Cartpole):
    max_episode_length = 5


def test_attributes_and_observations() -> None:
    with unisim.make("quadruped", num_envs=3) as task:
        env = RslRlVecEnv(task)
        assert isinstance(env, VecEnv)
        assert (env.num_envs, env.num_actions, env.max_episode_length) == (3, 8, 400)
        assert env.device == torch.device("cpu")
        assert isinstance(env.cfg, dict)
        obs = env.get_observations()
        assert isinstance(obs, TensorDict) and obs.batch_size == torch.Size([3])
        assert obs["policy"].shape == (3, 36) and obs["policy"].dtype == torch.float32
        assert env.episode_length_buf.shape == (3,)


def test_step_contract() -> None:
    with unisim.make("cartpole", num_envs=4) as task:
        env = RslRlVecEnv(task)
        obs, rewards, dones, extras = env.step(torch.zeros(4, 1))
        assert isinstance(obs, TensorDict) and obs["policy"].shape == (4, 5)
        assert rewards.shape == (4,) and rewards.dtype == torch.float32
        assert dones.shape == (4,) and dones.dtype == torch.bool
        assert extras["time_outs"].shape == (4,) and extras["time_outs"].dtype == torch.bool
        assert isinstance(extras["log"], dict)
        assert all(obs[key].device == env.device for key in obs.keys())  # noqa: SIM118


def test_time_outs_are_dones_and_reset_in_the_same_step() -> None:
    with ShortCartpole(4, seed=1) as task:
        env = RslRlVecEnv(task)
        for _ in range(4):
            _, _, dones, extras = env.step(torch.zeros(4, 1))
            assert not dones.any() and not extras["time_outs"].any()
        obs, _, dones, extras = env.step(torch.zeros(4, 1))
        assert dones.all() and extras["time_outs"].all()
        assert (env.episode_length_buf == 0).all()  # new episodes already started
        assert torch.equal(obs["policy"], env.get_observations()["policy"])
        assert torch.equal(obs["policy"], task.observations().float())
        assert extras["log"]["Episode_Reward/alive"] == pytest.approx(5.0)


def test_terminations_are_dones_but_not_time_outs() -> None:
    with unisim.make("cartpole", num_envs=4, seed=2) as task:
        env = RslRlVecEnv(task)
        for _ in range(task.max_episode_length):
            _, _, dones, extras = env.step(torch.zeros(4, 1))
            if dones.any():
                break
        assert dones.any() and not extras["time_outs"][dones].any()
        assert (env.episode_length_buf[dones] == 0).all()
        assert (env.episode_length_buf[~dones] > 0).all()


def test_episode_length_buf_can_be_randomised_like_rsl_rl_does() -> None:
    with ShortCartpole(6, seed=0) as task:
        env = RslRlVecEnv(task)
        env.episode_length_buf = torch.randint_like(env.episode_length_buf, high=5)
        env.episode_length_buf[:] = torch.tensor([0, 1, 2, 3, 4, 4])
        _, _, dones, extras = env.step(torch.zeros(6, 1))
        assert dones.tolist() == [False, False, False, False, True, True]
        assert torch.equal(extras["time_outs"], dones)
