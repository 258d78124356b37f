"""gymnasium's ``VectorEnv`` over a unisim task: numpy in, numpy out, Box spaces.

The autoreset mode is chosen once, at construction, and declared in
``metadata["autoreset_mode"]`` as gymnasium asks:

* ``NEXT_STEP`` (gymnasium's default, what its vector wrappers accept): the step after an
  episode ends ignores that env's action and returns its first observation, with reward 0;
* ``SAME_STEP``: the step that ends an episode already returns the new episode's first
  observation; the last one is in ``infos["final_obs"]`` (masked by ``infos["_final_obs"]``);
* ``DISABLED``: nothing resets by itself; call ``reset(options={"reset_mask": done})``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from gymnasium.spaces import Box
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..tasks import Task, Transition

StepResult = tuple[npt.NDArray[np.float32], npt.NDArray[np.float64], npt.NDArray[np.bool_],
                   npt.NDArray[np.bool_], dict[str, Any]]


class GymnasiumVectorEnv(VectorEnv):  # type: ignore[misc]
    """``GymnasiumVectorEnv(unisim.make("cartpole", 64))``: a batched gymnasium env."""

    def __init__(self, task: Task,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP) -> None:
        self.task = task
        self.num_envs = task.num_envs
        mode = AutoresetMode(autoreset_mode)
        self.metadata = {"autoreset_mode": mode}
        self.single_observation_space = Box(-np.inf, np.inf, (task.num_observations,),
                                            np.float32)
        self.single_action_space = Box(-task.action_clip, task.action_clip,
                                       (task.num_actions,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        finish: dict[AutoresetMode, Callable[[Transition], StepResult]] = {
            AutoresetMode.NEXT_STEP: self._next_step,
            AutoresetMode.SAME_STEP: self._same_step,
            AutoresetMode.DISABLED: self._disabled,
        }
        self._finish = finish[mode]
        self._autoreset = torch.zeros(self.num_envs, dtype=torch.bool)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[npt.NDArray[np.float32],
                                                               dict[str, Any]]:
        """Reset every env, or those in ``options["reset_mask"]`` (a bool array of shape
        ``(num_envs,)``); ``seed`` re-seeds the task's initial-state noise."""
        super().reset(seed=seed)
        mask = self._reset_mask(options)
        observations = self.task.reset(mask, seed=seed)
        if mask is None:
            self._autoreset[:] = False
        else:
            self._autoreset[torch.from_numpy(mask)] = False
        return _numpy(observations), {}

    def step(self, actions: Any) -> StepResult:
        actions = np.asarray(actions)
        if actions.shape != self.action_space.shape:
            raise ValueError(f"actions must have shape {self.action_space.shape}, "
                             f"got {actions.shape}")
        return self._finish(self.task.step(torch.from_numpy(actions)))

    def close_extras(self, **kwargs: Any) -> None:
        self.task.close()

    # -- the autoreset modes ---------------------------------------------------------

    def _next_step(self, step: Transition) -> StepResult:
        observations, rewards = step.observations, step.rewards
        terminated, truncated = step.terminated, step.truncated
        pending = self._autoreset.to(observations.device)
        if bool(pending.any()):
            observations = self.task.reset(pending)
            rewards, terminated, truncated = (rewards.masked_fill(pending, 0.0),
                                              terminated & ~pending, truncated & ~pending)
        self._autoreset = (terminated | truncated).cpu()
        return _numpy(observations), _numpy(rewards, np.float64), _numpy(terminated), \
            _numpy(truncated), {}

    def _same_step(self, step: Transition) -> StepResult:
        done = step.done
        observations, infos = step.observations, {}
        if bool(done.any()):
            mask = _numpy(done)
            final = np.full(self.num_envs, None, dtype=object)
            last = _numpy(observations)
            for i in np.flatnonzero(mask):  # gymnasium's format: one array per finished env
                final[i] = last[i]
            infos = {"final_obs": final, "_final_obs": mask}
            observations = self.task.reset(done)
        return _numpy(observations), _numpy(step.rewards, np.float64), \
            _numpy(step.terminated), _numpy(step.truncated), infos

    def _disabled(self, step: Transition) -> StepResult:
        return _numpy(step.observations), _numpy(step.rewards, np.float64), \
            _numpy(step.terminated), _numpy(step.truncated), {}

    def _reset_mask(self, options: dict[str, Any] | None) -> npt.NDArray[np.bool_] | None:
        if not options or "reset_mask" not in options:
            return None
        mask = options["reset_mask"]
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ \
                or mask.shape != (self.num_envs,):
            raise ValueError(f"options['reset_mask'] must be a numpy bool array of shape "
                             f"({self.num_envs},), got {type(mask).__name__} "
                             f"{getattr(mask, 'dtype', '')} {getattr(mask, 'shape', '')}")
        if not mask.any():
            raise ValueError("options['reset_mask'] selects no env; pass at least one True")
        return mask


def _numpy(tensor: torch.Tensor, dtype: Any = None) -> Any:
    array = tensor.detach().cpu().numpy()
    return array if dtype is None else array.astype(dtype)
