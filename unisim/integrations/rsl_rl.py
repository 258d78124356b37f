"""rsl_rl's ``VecEnv`` (rsl-rl-lib 5.x) over a unisim task: drop it into ``OnPolicyRunner``.

rsl_rl expects same-step autoreset: the observations returned for an env whose episode
just ended are those of its new episode, ``dones`` marks the end, and
``extras["time_outs"]`` says which ends were time-outs (rsl_rl then bootstraps the value
instead of treating the state as terminal).
"""

from __future__ import annotations

from typing import Any

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from ..tasks import Task


class RslRlVecEnv(VecEnv):  # type: ignore[misc]
    """``OnPolicyRunner(RslRlVecEnv(unisim.make("cartpole", 256)), cfg, ...)``.

    Observations come as the group ``"policy"``; configure ``obs_groups`` as
    ``{"actor": ["policy"], "critic": ["policy"]}``.
    """

    def __init__(self, task: Task, cfg: dict[str, Any] | object | None = None) -> None:
        self.task = task
        self.num_envs = task.num_envs
        self.num_actions = task.num_actions
        self.max_episode_length = task.max_episode_length
        self.device = task.device
        self.cfg = cfg if cfg is not None else {"task": type(task).__name__,
                                                "num_envs": task.num_envs}
        self._observations = task.reset()

    @property
    def episode_length_buf(self) -> torch.Tensor:
        return self.task.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        # rsl_rl randomises it once (init_at_random_ep_len) to spread the time-outs.
        self.task.episode_length_buf = torch.as_tensor(value, dtype=torch.long).to("cpu")

    def get_observations(self) -> TensorDict:
        return self._wrap(self._observations)

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor,
                                                   dict[str, Any]]:
        step = self.task.step(actions)
        done = step.done
        observations = self.task.reset(done) if bool(done.any()) else step.observations
        self._observations = observations
        extras: dict[str, Any] = {"time_outs": step.truncated, "log": step.log}
        return self._wrap(observations), step.rewards, done, extras

    def close(self) -> None:
        self.task.close()

    def _wrap(self, observations: torch.Tensor) -> TensorDict:
        return TensorDict({"policy": observations}, batch_size=[self.num_envs],
                          device=self.device)
