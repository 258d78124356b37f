"""The env surface of IsaacGym Preview 4 tasks, for learners that wrap one (skrl 1.4's
``wrap_env(env, wrapper="isaacgym-preview4")``; rl_games through ``rl_games.RlGamesVecEnv``).

What those wrappers read of an IsaacGymEnvs ``VecTask``: ``num_envs``, ``num_obs``,
``num_states``, ``num_actions``, ``device``, ``rl_device``, ``observation_space`` /
``action_space`` / ``state_space``, ``max_episode_length``; ``step(actions)`` returning
``({"obs", "states"}, rew, reset, extras)`` with ``extras["time_outs"]``; ``reset()``
returning the observation dict; ``reset_done()``; ``get_number_of_agents()``. Episodes
restart inside the task's step, as on the SDK.

The spaces are old ``gym``'s, as ``VecTask``'s are: skrl 1.4's wrapper converts them with
``convert_gym_space``, which refuses gymnasium's. gym comes with the ``trainers`` extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gym.spaces import Box

from .env import BridgedTask

ObsDict = dict[str, torch.Tensor]
StepResult = tuple[ObsDict, torch.Tensor, torch.Tensor, dict[str, Any]]


class IsaacGymPreview4Env:
    """``skrl.envs.wrappers.torch.wrap_env(IsaacGymPreview4Env(task), "isaacgym-preview4")``."""

    def __init__(self, task: BridgedTask) -> None:
        self.task = task
        self.num_envs = task.num_envs
        self.num_obs = task.num_observations
        self.num_states = task.num_privileged_observations
        self.num_actions = task.num_actions
        self.max_episode_length = task.max_episode_length
        self.device = self.rl_device = str(task.device)
        self.observation_space = Box(-np.inf, np.inf, (self.num_obs,), np.float32)
        self.state_space = Box(-np.inf, np.inf, (self.num_states,), np.float32)
        self.action_space = Box(-task.action_clip, task.action_clip, (self.num_actions,),
                                np.float32)
        self._observations = task.reset()

    def step(self, actions: torch.Tensor) -> StepResult:
        step = self.task.step(actions)
        self._observations = step.observations
        extras: dict[str, Any] = {"time_outs": step.truncated, "episode": step.log}
        return self._obs_dict(), step.rewards, step.done.long(), extras

    def reset(self) -> ObsDict:
        """The current observations: the task restarts its episodes itself."""
        return self._obs_dict()

    def reset_done(self) -> tuple[ObsDict, torch.Tensor]:
        """The observations and the envs whose episodes need a reset: none, here."""
        return self._obs_dict(), torch.zeros(0, dtype=torch.long, device=self.task.device)

    def get_number_of_agents(self) -> int:
        return 1

    def close(self) -> None:
        self.task.close()

    def _obs_dict(self) -> ObsDict:
        observations = {"obs": self._observations}
        states = self.task.privileged_observations()
        if states is not None:
            observations["states"] = states
        return observations
