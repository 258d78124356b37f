"""A legacy IsaacGym task (legged_gym, IsaacGymEnvs) in a worker, as a unisim ``Task``.

The task runs unmodified on the worker's interpreter (Python 3.8, the SDK, its own torch),
served by the worker's ``task`` engine; the host sees it through the ``Task`` interface, so
the existing adapters (``RslRlVecEnv``, ``GymnasiumVectorEnv``) serve it too. Its outputs
live in the backend's slots (shared memory, or CUDA memory with ``data_plane="cuda"``);
``step`` returns copies, since the next step overwrites the slots.

IsaacGym tasks end and restart episodes inside their own ``step``: legged_gym in the same
step, IsaacGymEnvs in the next. ``reset(env_ids)`` therefore resets only the envs that have
not begun a new episode yet (episode length not 0), so the adapters' same-step resets cost
a request only for a task that resets late.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..backend import Backend
from ..tasks.base import Task, Transition

VIEWS = ("_ctrl", "_obs", "_privileged", "_lengths", "_log")
# A step's outputs for the learner: adjacent slots, copied in one copy (``StepOutputs``)
STEP_OUTPUTS = ("obs", "rew", "terminated", "truncated")


class BridgedTask(Task):
    """``BridgedTask("isaacgym_tasks.ant:Ant", 64, style="vec_task", cfg={...},
    paths=["examples"], python=py38)``: the task's class by import path on the worker.

    ``style``: ``"vec_task"`` (IsaacGymEnvs: ``cfg`` is the task's config map) or
    ``"legged_gym"`` (``cfg`` is the config class as ``"module:Class"``, or ``registry`` a
    ``TaskRegistry`` as ``"module:attribute"`` and ``task`` a registered name; ``overrides``
    sets config attributes by dotted name). ``paths``: folders of the user's code, put
    first on the worker's ``sys.path``. ``sim_device``: ``"cpu"`` or ``"cuda:N"`` (the GPU
    pipeline); ``data_plane="cuda"`` keeps the slots on that GPU. ``python``: the worker's
    interpreter (one with the SDK, numpy and msgpack).
    """

    engine = "task"

    def __init__(self, task: str, num_envs: int = 1, *, style: str,
                 cfg: dict[str, Any] | str | None = None, registry: str | None = None,
                 overrides: dict[str, Any] | None = None, paths: Sequence[str | Path] = (),
                 sim_device: str = "cpu", data_plane: str = "shm",
                 python: str | Path | None = None, seed: int = 0, timeout: float = 60.0,
                 progress: bool = False) -> None:
        self.options: dict[str, Any] = {
            "task": task, "style": style, "cfg": cfg, "registry": registry,
            "overrides": overrides or {},
            "paths": [str(Path(p).expanduser().resolve()) for p in paths],
            "sim_device": sim_device, "seed": seed}
        gpu = int(sim_device.split(":")[1]) if sim_device.startswith("cuda:") else 0
        self.sim = Backend("task", num_envs=num_envs, python=python, options=self.options,
                           workers=1, timeout=timeout, progress=progress,
                           data_plane=data_plane, device=gpu if data_plane == "cuda" else None)
        try:
            info = self.sim.report["task"]
            self.info: dict[str, Any] = info
            self.num_envs = self.sim.num_envs
            self.num_actions = int(info["num_actions"])
            self.num_observations = int(info["num_obs"])
            self.num_privileged_observations = int(info["num_privileged_obs"])
            # Task's class-level settings are the worker's task's own here (ignore: ClassVar)
            self.max_episode_length = int(info["max_episode_length"])  # type: ignore[misc]
            self.step_dt = float(info["dt"])
            self.action_clip = float(info["action_clip"])  # type: ignore[misc]
            self.log_names: tuple[str, ...] = tuple(info["log_names"])
            views = self.sim.tensors()
            self.device = views["obs"].device
            self._ctrl, self._lengths = views["ctrl"], views["episode_length"]
            # What step copies out for the learner: numpy views where the slots are host
            # memory (``_copy`` says why), torch's on the CUDA plane.
            host = self.device.type == "cpu"
            self._outputs = StepOutputs(self.sim.block(STEP_OUTPUTS),
                                        [views[name] for name in STEP_OUTPUTS], host)
            self._obs = _held(views["obs"], host)
            privileged = views.get("privileged_obs")
            self._privileged = None if privileged is None else _held(privileged, host)
            self._log = views.get("log")
            self._log_row = _row(self._log)
            self._reset_since_step = False
        except BaseException:
            self.sim.close()
            raise

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """Each env's step in its episode; setting it sets the task's own buffer at the next
        step (rsl_rl spreads the time-outs this way)."""
        return self._lengths

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self._lengths.copy_(torch.as_tensor(value))

    def step(self, actions: Any) -> Transition:
        """One step of the task, which also restarts the episodes it ends (its own way)."""
        actions = torch.as_tensor(actions).detach()
        if tuple(actions.shape) != (self.num_envs, self.num_actions):
            raise ValueError(f"actions must have shape {(self.num_envs, self.num_actions)} "
                             f"(num_envs, num_actions), got {tuple(actions.shape)}")
        self.sim.step_soon()  # the worker wakes while the actions are copied and checked
        # Copied into the slot by torch (any dtype or device), then checked there, as float32
        # (a float64 beyond its range is infinite there): a finite sum means finite actions,
        # one reduction at about a tenth of isfinite's cost on the CPU; only a sum that
        # overflowed or met NaN is looked at element by element. Nothing steps otherwise.
        ctrl = self._ctrl
        ctrl.copy_(actions)
        if not math.isfinite(ctrl.sum()) and not bool(torch.isfinite(ctrl).all()):
            raise ValueError("actions contain NaN or infinite values (as float32); check the "
                             "policy's output")
        self.sim.step()
        self._reset_since_step = False
        log: dict[str, float] = {}
        if self._log_row is not None:
            log = {f"Episode_Extras/{name}": value for name, value in
                   zip(self.log_names, self._log_row.tolist(), strict=True) if value == value}
        observations, rewards, terminated, truncated = self._outputs.copy()
        return Transition(observations, rewards, terminated, truncated, log)

    def reset(self, env_ids: Any = None, seed: int | None = None) -> torch.Tensor:
        """Start new episodes in ``env_ids`` (all if None) that have not just begun one;
        every env's observations. The seed is the task's own, given when it is built."""
        if seed is not None:
            raise ValueError("a bridged task is seeded when it is built: BridgedTask(seed=...)")
        ids = self._env_ids(env_ids).to(self._lengths.device)
        started = ids[self._lengths[ids] != 0]
        if len(started):
            if self._reset_since_step:
                raise ValueError(
                    "a second reset since the last step: IsaacGym applies only the last call "
                    "of each state setter before a simulate, so the first reset's envs would "
                    "be lost; pass every env to reset in one call")
            self.sim.reset(started.cpu().numpy())
            self._reset_since_step = True
        return _copy(self._obs)

    def privileged_observations(self) -> torch.Tensor | None:
        """The critic's observations (legged_gym's privileged, IsaacGymEnvs' states), or None
        when the task has none."""
        return None if self._privileged is None else _copy(self._privileged)

    def __enter__(self) -> BridgedTask:
        return self

    def close(self) -> None:
        """Stop the worker; safe to call twice. The outputs keep their last values, as
        copies: no view of the released shared memory stays behind."""
        self.sim.close()
        for name in VIEWS:
            view = getattr(self, name)
            if view is not None:
                setattr(self, name, _owned(view))
        self._outputs.detach()
        self._log_row = _row(self._log)


class StepOutputs:
    """A step's outputs, adjacent in the arena, copied for the learner in one copy of their
    block and handed over as views of that copy. On the CUDA plane that is one kernel where
    each output's copy and each flag was one, each launched cold after the task's step (the
    host's part after the reply shrank on the GPU machine); on host memory it costs what
    the separate copies did."""

    def __init__(self, block: torch.Tensor, views: Sequence[torch.Tensor], host: bool) -> None:
        start = block.data_ptr()
        self.block = _held(block, host)
        # (offset, bytes, dtype, shape) of each output in the block
        self.parts = [(view.data_ptr() - start, view.numel() * view.element_size(),
                       view.numpy().dtype if host else view.dtype, tuple(view.shape))
                      for view in views]

    def copy(self) -> list[torch.Tensor]:
        data = self.block
        if isinstance(data, np.ndarray):
            data = data.copy()
            return [torch.from_numpy(np.ndarray(shape, dtype, buffer=data, offset=offset))
                    for offset, _, dtype, shape in self.parts]
        data = data.clone()
        return [data[offset:offset + size].view(dtype).view(shape)
                for offset, size, dtype, shape in self.parts]

    def detach(self) -> None:
        """Hold a copy instead of the slots' memory (the backend closed)."""
        self.block = _owned(self.block)


def _held(view: torch.Tensor, host: bool) -> torch.Tensor | np.ndarray:
    """How an output's slot is held: as numpy where it is host memory (``_copy``)."""
    return view.numpy() if host else view


def _copy(view: torch.Tensor | np.ndarray) -> torch.Tensor:
    """A copy of an output's slot that the learner owns. Where the slot is host memory,
    numpy copies it: just after the wait, with the task's step having evicted the caches,
    torch's ``clone`` took about three times numpy's ``copy`` of the same
    observations (75 against 26 us, 1024 x 33 floats, this repository's 2-core machines)."""
    owned = _owned(view)
    return torch.from_numpy(owned) if isinstance(owned, np.ndarray) else owned


def _owned(view: Any) -> Any:
    """A copy of a slot's view, held the same way (numpy or torch)."""
    return view.copy() if isinstance(view, np.ndarray) else view.clone()


def _row(log: torch.Tensor | None) -> Any:
    """The log's first row, read on every step: as numpy where it is host memory (numpy's
    ``tolist`` costs a fraction of torch's)."""
    return None if log is None else log[0] if log.is_cuda else log[0].numpy()
