"""rsl_rl's ``VecEnv`` (rsl-rl-lib 5.x) over a bridged task, with the critic's group.

``RslRlVecEnv`` serves any unisim task with the group ``"policy"``; a bridged task with
privileged observations (legged_gym's ``privileged_obs_buf``, IsaacGymEnvs' states) adds
the group ``"critic"``. ``obs_groups`` gives the runner config that uses them.
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDict

from ..integrations.rsl_rl import RslRlVecEnv
from .env import BridgedTask


class RslRlTaskEnv(RslRlVecEnv):
    """``OnPolicyRunner(RslRlTaskEnv(task), {..., "obs_groups": obs_groups(task)}, ...)``."""

    def __init__(self, task: BridgedTask, cfg: dict[str, Any] | object | None = None) -> None:
        self.bridged = task
        super().__init__(task, cfg)

    def _wrap(self, observations: torch.Tensor) -> TensorDict:
        groups = {"policy": observations}
        privileged = self.bridged.privileged_observations()
        if privileged is not None:
            groups["critic"] = privileged
        return TensorDict(groups, batch_size=[self.num_envs], device=self.device)


def obs_groups(task: BridgedTask) -> dict[str, list[str]]:
    """The runner's ``obs_groups``: the critic sees the privileged group when there is one."""
    critic = "critic" if task.num_privileged_observations else "policy"
    return {"actor": ["policy"], "critic": [critic]}
