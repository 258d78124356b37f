"""rl_games' vecenv (``rl-games`` 1.6.5+) over a bridged task, in place of IsaacGymEnvs'
``RLGPUEnv`` (which cannot be imported on the host: its module imports every IsaacGymEnvs
task, hence the SDK).

Registered as IsaacGymEnvs' ``train.py`` registers ``RLGPUEnv``: ``env_configurations``
names an ``env_creator`` that returns an ``IsaacGymPreview4Env``, and ``vecenv`` builds
``RlGamesVecEnv(config_name, num_actors, **kwargs)`` around it. Steps, resets and spaces
pass through, as ``RLGPUEnv``'s do (rl_games 1.6.5 tells spaces by their class name, so
it takes gym's as it takes gymnasium's).
"""

from __future__ import annotations

from typing import Any

import torch
from rl_games.common import env_configurations
from rl_games.common.ivecenv import IVecEnv

from .preview4 import IsaacGymPreview4Env, ObsDict, StepResult


class RlGamesVecEnv(IVecEnv):  # type: ignore[misc]
    """``vecenv.register("RLGPU", lambda name, n, **kw: RlGamesVecEnv(name, n, **kw))``."""

    def __init__(self, config_name: str, num_actors: int, **kwargs: Any) -> None:
        env = env_configurations.configurations[config_name]["env_creator"](**kwargs)
        if not isinstance(env, IsaacGymPreview4Env):
            raise TypeError(f"env_configurations[{config_name!r}]['env_creator'] returned "
                            f"{type(env).__name__}; make it return "
                            "IsaacGymPreview4Env(BridgedTask(...))")
        if env.num_envs != num_actors:
            raise ValueError(f"the config's num_actors is {num_actors} but the task has "
                             f"{env.num_envs} envs; set num_actors to the task's num_envs")
        self.env = env

    def step(self, actions: torch.Tensor) -> StepResult:
        return self.env.step(actions)

    def reset(self) -> ObsDict:
        return self.env.reset()

    def reset_done(self) -> tuple[ObsDict, torch.Tensor]:
        return self.env.reset_done()

    def get_number_of_agents(self) -> int:
        return self.env.get_number_of_agents()

    def get_env_info(self) -> dict[str, Any]:
        info = {"action_space": self.env.action_space,
                "observation_space": self.env.observation_space}
        if self.env.num_states > 0:
            info["state_space"] = self.env.state_space
        return info
