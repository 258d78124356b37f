"""The task layer: a ``Backend`` turned into a batched RL environment, computed in torch.

A task reads the worker's state through zero-copy torch views of the shared-memory slots
(``qpos``, ``qvel``), and computes observations, rewards and terminations for all envs at
once on the host; nothing loops over envs in Python. A subclass names its model and writes
four small methods (see ``docs/training.md``). Episodes end by termination (the task says
the state is terminal) or by time-out (``max_episode_length`` control steps); ``step``
reports both and never resets: the adapters decide when (same step for rsl_rl, next step
or same step for gymnasium), through ``reset(env_ids)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

import torch

from ..backend import Backend
from ..physics_randomization import PhysicsRandomization


@dataclass
class Transition:
    """What one control step produced, for every env (tensors on ``Task.device``).

    ``log`` holds the mean episode sums of each reward term over the envs whose episode
    ended in this step (empty when none did).
    """

    observations: torch.Tensor  # (num_envs, num_observations) float32
    rewards: torch.Tensor  # (num_envs,) float32
    terminated: torch.Tensor  # (num_envs,) bool: a terminal state
    truncated: torch.Tensor  # (num_envs,) bool: time-out, and not terminal
    log: dict[str, float] = field(default_factory=dict)

    @property
    def done(self) -> torch.Tensor:
        return self.terminated | self.truncated


class Task:
    """Base class of tasks: ``num_envs`` episodes of one MJCF scene in a worker.

    Subclasses set ``model`` (and optionally ``keyframe``, ``substeps``,
    ``max_episode_length``, ``action_clip``) and override ``observations``, ``rewards``,
    ``terminated`` and usually ``initial_state``. During those calls ``self.qpos`` and
    ``self.qvel`` are float64 views of the worker's state, ``self.actions`` the clipped
    actions of this step (``self.previous_actions`` those of the step before; both zero
    after a reset), ``self.episode_length_buf`` the steps taken in each episode.
    """

    model: ClassVar[str | Path]
    engine: ClassVar[str] = "mujoco"
    keyframe: ClassVar[str | None] = None
    substeps: ClassVar[int] = 1  # physics steps per control step (control decimation)
    max_episode_length: ClassVar[int] = 500  # control steps before a time-out
    action_clip: ClassVar[float] = 1.0  # actions are clipped to [-clip, clip]
    camera: ClassVar[str | None] = None  # the model camera for videos (None: free camera)
    # What ``randomize=True`` draws (docs/randomization.md); None: the task has no default.
    randomization: ClassVar[PhysicsRandomization | None] = None

    def __init__(self, num_envs: int = 1, *, python: str | Path | None = None, seed: int = 0,
                 device: str | torch.device = "cpu", progress: bool = False,
                 timeout: float = 60.0,
                 randomize: bool | PhysicsRandomization = False) -> None:
        self.device = torch.device(device)
        self.sim = Backend(self.engine, model=self.model, num_envs=num_envs, python=python,
                           keyframe=self.keyframe, progress=progress, timeout=timeout,
                           randomization=self._randomization(randomize, seed))
        try:
            self.num_envs = self.sim.num_envs
            views = self.sim.tensors()
            self.qpos: torch.Tensor = views["qpos"]
            self.qvel: torch.Tensor = views["qvel"]
            # The worker published each env's initial state (the keyframe, if any).
            self.default_qpos = self.qpos[0].clone()
            self.default_qvel = self.qvel[0].clone()
            ctrl_range = torch.tensor(self.sim.layout.ctrl_range, dtype=torch.float64)
            self.ctrl_low, self.ctrl_high = ctrl_range[:, 0], ctrl_range[:, 1]
            self.num_actions = self.sim.layout.nu
            self.step_dt = self.sim.layout.timestep * self.substeps
            self.generator = torch.Generator().manual_seed(seed)
            self.actions = torch.zeros(self.num_envs, self.num_actions, dtype=torch.float64)
            self.previous_actions = torch.zeros_like(self.actions)
            self.episode_length_buf = torch.zeros(self.num_envs, dtype=torch.long)
            self.setup()
            self._episode_sums = {name: torch.zeros(self.num_envs, dtype=torch.float64)
                                  for name in self.rewards()}
            self.reset()
            self.num_observations = int(self.observations().shape[1])
        except BaseException:
            self.sim.close()
            raise

    # -- what a task defines -----------------------------------------------------------

    def setup(self) -> None:
        """Precompute constants and buffers once the scene is known (optional)."""

    def initial_state(self, env_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(qpos, qvel)`` rows to start the episodes of ``env_ids``; draw noise with
        ``self.generator`` so that a seed fixes the rollouts. Default: the initial state."""
        n = len(env_ids)
        return self.default_qpos.expand(n, -1), self.default_qvel.expand(n, -1)

    def observations(self) -> torch.Tensor:
        """``(num_envs, num_observations)`` observations of the current state."""
        raise NotImplementedError

    def rewards(self) -> dict[str, torch.Tensor]:
        """Reward terms, each ``(num_envs,)``, already weighted; the reward is their sum.
        Always the same names (their episode sums are logged per name)."""
        raise NotImplementedError

    def terminated(self) -> torch.Tensor:
        """``(num_envs,)`` bool: which envs are in a terminal state."""
        raise NotImplementedError

    def action_to_ctrl(self, actions: torch.Tensor) -> torch.Tensor:
        """Map clipped actions to actuator controls. Default: ``[-clip, clip]`` onto each
        actuator's ctrl range."""
        unit = actions / self.action_clip
        return self.ctrl_low + (unit + 1.0) * 0.5 * (self.ctrl_high - self.ctrl_low)

    # -- the environment loop -----------------------------------------------------------

    def step(self, actions: Any) -> Transition:
        """Apply ``actions`` for ``substeps`` physics steps and evaluate the new state."""
        actions = self._checked_actions(actions).clamp(-self.action_clip, self.action_clip)
        # Buffers are updated in place: a step under torch.inference_mode (as rsl_rl's
        # rollouts are) must not turn them into inference tensors.
        self.previous_actions.copy_(self.actions)
        self.actions.copy_(actions)
        self.sim.step(self.action_to_ctrl(self.actions), substeps=self.substeps)
        self.episode_length_buf += 1
        reward = torch.zeros(self.num_envs, dtype=torch.float64)
        for name, value in self.rewards().items():
            reward += value
            self._episode_sums[name] += value
        terminated = self.terminated()
        truncated = (self.episode_length_buf >= self.max_episode_length) & ~terminated
        done = terminated | truncated
        log: dict[str, float] = {}
        if bool(done.any()):
            for name, sums in self._episode_sums.items():
                log[f"Episode_Reward/{name}"] = float(sums[done].mean())
            log["Episode_Termination/terminated"] = float(terminated[done].float().mean())
        return Transition(self._out(self.observations(), torch.float32),
                          self._out(reward, torch.float32), self._out(terminated, torch.bool),
                          self._out(truncated, torch.bool), log)

    def reset(self, env_ids: Any = None, seed: int | None = None) -> torch.Tensor:
        """Start new episodes in ``env_ids`` (all if None; indices or a bool mask);
        ``seed`` re-seeds the generator first. Returns every env's observations."""
        if seed is not None:
            self.generator.manual_seed(seed)
        ids = self._env_ids(env_ids)
        if len(ids):
            qpos, qvel = self.initial_state(ids)
            self.sim.reset(ids, qpos=qpos, qvel=qvel)
            self.episode_length_buf[ids] = 0
            self.actions[ids] = 0.0
            self.previous_actions[ids] = 0.0
            for sums in self._episode_sums.values():
                sums[ids] = 0.0
        return self._out(self.observations(), torch.float32)

    def uniform(self, low: float, high: float, *shape: int) -> torch.Tensor:
        """Uniform float64 noise in ``[low, high)`` from the task's seeded generator."""
        sample = torch.rand(*shape, generator=self.generator, dtype=torch.float64)
        return low + (high - low) * sample

    def close(self) -> None:
        """Stop the worker; safe to call twice. ``qpos``/``qvel`` keep the last state, as
        copies, so that the task holds no view of the released shared memory."""
        self.sim.close()
        self.qpos, self.qvel = self.qpos.clone(), self.qvel.clone()

    def __enter__(self) -> Task:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} num_envs={self.num_envs} {self.sim!r}>"

    # -- checks ----------------------------------------------------------------------

    @classmethod
    def _randomization(cls, randomize: bool | PhysicsRandomization,
                       seed: int) -> PhysicsRandomization | None:
        """``randomize``: a spec, or True for the task's own (re-seeded with ``seed``)."""
        if isinstance(randomize, PhysicsRandomization):
            return randomize
        if not randomize:
            return None
        if cls.randomization is None:
            raise ValueError(f"{cls.__name__} has no default physics randomization; pass "
                             "randomize=unisim.PhysicsRandomization(...)")
        return replace(cls.randomization, seed=seed)

    def _checked_actions(self, actions: Any) -> torch.Tensor:
        tensor = torch.as_tensor(actions).detach().to("cpu", torch.float64)
        expected = (self.num_envs, self.num_actions)
        if tuple(tensor.shape) != expected:
            raise ValueError(f"actions must have shape {expected} (num_envs, num_actions), "
                             f"got {tuple(tensor.shape)}")
        if not bool(torch.isfinite(tensor).all()):
            raise ValueError("actions contain NaN or infinite values; check the policy's output")
        return tensor

    def _env_ids(self, env_ids: Any) -> torch.Tensor:
        if env_ids is None:
            return torch.arange(self.num_envs)
        ids = torch.as_tensor(env_ids).detach().to("cpu")
        if ids.dtype == torch.bool:
            if tuple(ids.shape) != (self.num_envs,):
                raise ValueError(f"a boolean env mask must have shape ({self.num_envs},), "
                                 f"got {tuple(ids.shape)}")
            return ids.nonzero().flatten()
        if ids.dtype.is_floating_point or ids.dtype.is_complex:
            raise TypeError(f"env_ids must be integers or a boolean mask, got {ids.dtype}")
        ids = ids.flatten().long()
        if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= self.num_envs):
            raise IndexError(f"env_ids must lie in [0, {self.num_envs}), "
                             f"got {int(ids.min())}..{int(ids.max())}")
        return ids

    def _out(self, tensor: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        return tensor.to(self.device, dtype)
