"""rl_games' vecenv (``rl-games`` 1.6.5+) over a bridged task: IsaacGymEnvs' ``RLGPUEnv``.

Registered as IsaacGymEnvs' ``train.py`` registers ``RLGPUEnv``: ``env_configurations``
names an ``env_creator`` that returns an ``IsaacGymPreview4Env``, and ``vecenv`` builds
``RlGamesVecEnv(config_name, num_actors, **kwargs)`` around it. Steps and resets pass
through, as ``RLGPUEnv``'s do. The spaces do not: on Python >= 3.9, rl_games checks them
against gymnasium's classes, so ``get_env_info`` gives gymnasium ``Box``es of the task's
``gym`` ones.
"""

from __future__ import annotations

from typing import Any

import gym
import gymnasium
import numpy as np
from rl_games.common import env_configurations
from rl_games.common.ivecenv import IVecEnv

from .preview4 import IsaacGymPreview4Env, ObsDict, StepResult


class RlGamesVecEnv(IVecEnv):  # type: ignore[misc]
    """``vecenv.register("RLGPU", lambda name, n, **kw: RlGamesVecEnv(name, n, **kw))``."""

    def __init__(self, config_name: str, num_actors: int, **kwargs: Any) -> None:
        creator = env_configurations.configurations[config_name]["env_creator"]
        env = creator(**kwargs)
        if not isinstance(env, IsaacGymPreview4Env):
            raise TypeError(f"env_configurations[{config_name!r}]['env_creator'] returned "
                            f"{type(env).__name__}; make it return "
                            "IsaacGymPreview4Env(BridgedTask(...))")
        if env.num_envs != num_actors:
            raise ValueError(f"the config's num_actors is {num_actors} but the task has "
                             f"{env.num_envs} envs; set num_actors to the task's num_envs")
        self.env = env

    def step(self, actions: Any) -> StepResult:
        return self.env.step(actions)

    def reset(self) -> ObsDict:
        return self.env.reset()

    def reset_done(self) -> tuple[ObsDict, Any]:
        return self.env.reset_done()

    def get_number_of_agents(self) -> int:
        return self.env.get_number_of_agents()

    def get_env_info(self) -> dict[str, Any]:
        info = {"action_space": _gymnasium(self.env.action_space),
                "observation_space": _gymnasium(self.env.observation_space)}
        if self.env.num_states > 0:
            info["state_space"] = _gymnasium(self.env.state_space)
        return info


def _gymnasium(space: gym.spaces.Box) -> gymnasium.spaces.Box:
    return gymnasium.spaces.Box(space.low, space.high, space.shape, np.float32)
