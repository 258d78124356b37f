"""``GymnasiumVectorEnv``: gymnasium's vector API, its space checks and its wrappers."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.spaces import Box
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.utils.passive_env_checker import (
    _check_box_action_space,
    _check_box_observation_space,
    check_obs,
    check_space,
)
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics

import unisim
from unisim.integrations.gymnasium import GymnasiumVectorEnv
from unisim.tasks.cartpole import Cartpole


class ShortCartpole(Cartpole):
    max_episode_length = 3


def zeros(env: GymnasiumVectorEnv) -> np.ndarray:
    return np.zeros(env.action_space.shape, dtype=np.float32)


def test_spaces_and_gymnasiums_checks() -> None:
    with unisim.make("quadruped", num_envs=3) as task:
        env = GymnasiumVectorEnv(task)
        assert isinstance(env, VectorEnv)
        assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        assert isinstance(env.single_observation_space, Box)
        assert env.single_observation_space.shape == (36,)
        assert env.action_space.shape == (3, 8) and env.action_space.dtype == np.float32
        check_space(env.single_action_space, "action", _check_box_action_space)
        check_space(env.single_observation_space, "observation", _check_box_observation_space)
        obs, infos = env.reset(seed=0)
        check_obs(obs, env.observation_space, "reset")
        assert infos == {}
        obs, rewards, terminated, truncated, infos = env.step(env.action_space.sample())
        check_obs(obs, env.observation_space, "step")
        assert rewards.shape == (3,) and rewards.dtype == np.float64
        assert terminated.dtype == np.bool_ and truncated.dtype == np.bool_


def test_reset_seed_is_deterministic() -> None:
    with unisim.make("cartpole", num_envs=4) as task:
        env = GymnasiumVectorEnv(task)
        first, _ = env.reset(seed=5)
        steps = [env.step(np.full((4, 1), 0.3, dtype=np.float32)) for _ in range(5)]
        again, _ = env.reset(seed=5)
        assert data_equivalence(first, again)
        assert data_equivalence(steps, [env.step(np.full((4, 1), 0.3, dtype=np.float32))
                                        for _ in range(5)])
        other, _ = env.reset(seed=6)
        assert not data_equivalence(first, other)


def test_reset_mask_resets_only_those_envs() -> None:
    with unisim.make("cartpole", num_envs=4) as task:
        env = GymnasiumVectorEnv(task)
        env.reset(seed=0)
        before, *_ = env.step(np.full((4, 1), 0.5, dtype=np.float32))
        mask = np.array([True, False, False, True])
        after, _ = env.reset(options={"reset_mask": mask})
        assert np.array_equal(after[~mask], before[~mask])
        assert not np.array_equal(after[mask], before[mask])
        assert task.episode_length_buf.tolist() == [0, 1, 1, 0]
        with pytest.raises(ValueError, match="numpy bool array of shape"):
            env.reset(options={"reset_mask": [True, False, False, True]})
        with pytest.raises(ValueError, match="selects no env"):
            env.reset(options={"reset_mask": np.zeros(4, dtype=bool)})


def test_next_step_autoreset() -> None:
    with ShortCartpole(2, seed=0) as task:
        env = GymnasiumVectorEnv(task, AutoresetMode.NEXT_STEP)
        env.reset(seed=0)
        for _ in range(3):
            obs, rewards, terminated, truncated, _ = env.step(zeros(env))
        assert truncated.all() and not terminated.any()
        obs, rewards, terminated, truncated, _ = env.step(zeros(env))  # the reset step
        assert (rewards == 0).all() and not (terminated | truncated).any()
        assert np.array_equal(obs, task.observations().float().numpy())
        assert (task.episode_length_buf == 0).all()
        _, rewards, *_ = env.step(zeros(env))
        assert (rewards > 0).all()


def test_same_step_autoreset_reports_final_observations() -> None:
    with ShortCartpole(2, seed=0) as task:
        env = GymnasiumVectorEnv(task, "SameStep")
        env.reset(seed=0)
        env.step(zeros(env))
        env.step(zeros(env))
        obs, _, _, truncated, infos = env.step(zeros(env))
        assert truncated.all() and infos["_final_obs"].all()
        assert infos["final_obs"][0].shape == (5,)
        assert not np.array_equal(infos["final_obs"][0], obs[0])
        assert (task.episode_length_buf == 0).all()


def test_disabled_autoreset_leaves_resets_to_the_caller() -> None:
    with ShortCartpole(2, seed=0) as task:
        env = GymnasiumVectorEnv(task, AutoresetMode.DISABLED)
        env.reset(seed=0)
        for _ in range(3):
            *_, truncated, _ = env.step(zeros(env))
        assert truncated.all() and (task.episode_length_buf == 3).all()
        env.reset(options={"reset_mask": truncated})
        assert (task.episode_length_buf == 0).all()


def test_gymnasiums_vector_wrappers_accept_it() -> None:
    with unisim.make("cartpole", num_envs=4, seed=0) as task:
        env = RecordEpisodeStatistics(NormalizeObservation(GymnasiumVectorEnv(task)))
        env.reset(seed=0)
        finished = None
        for _ in range(60):
            *_, infos = env.step(np.zeros((4, 1), dtype=np.float32))
            if "episode" in infos:
                finished = infos
                break
        assert finished is not None, "the pole never fell with no push"
        lengths = finished["episode"]["l"][finished["_episode"]]
        assert (lengths > 0).all() and (lengths < 60).all()


def test_wrong_action_shape_is_refused() -> None:
    with unisim.make("cartpole", num_envs=2) as task:
        env = GymnasiumVectorEnv(task)
        env.reset()
        with pytest.raises(ValueError, match=r"shape \(2, 1\)"):
            env.step(np.zeros(2, dtype=np.float32))
        env.close()
        assert env.closed
