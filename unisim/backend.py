"""The host-side backend: a simulator in a worker process that feels in-process."""

from __future__ import annotations

import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt

from . import models, protocol
from .channel import Channel
from .errors import BackendDead, SetupError, UnisimError, WorkerDied
from .interpreter import resolve_python
from .layout import Layout
from .planes import DataPlane, as_numpy
from .planes import create as create_plane
from .process import WorkerProcess
from .progress import ProgressBar
from .slots import reap_orphans

Command = protocol.Command
SHUTDOWN_TIMEOUT = 5.0


class Backend:
    """``num_envs`` simulations of one scene, run by an engine in a worker process.

    State lives in shared memory: ``qpos``, ``qvel`` and ``ctrl`` are numpy views of shape
    ``(num_envs, nq | nv | nu)`` that the worker updates in place on every ``step`` and
    ``reset``; ``tensors()`` gives torch views of the same memory.

    ``data_plane="cuda"`` (engines whose state lives on a GPU, e.g. ``"mjx"``) puts them in
    device memory of GPU ``device`` shared with the worker by CUDA IPC instead: they are then
    torch CUDA tensors, and a step is ordered on torch's current stream, with no host copy.
    """

    def __init__(self, engine: str = "mujoco", model: str | Path | None = None,
                 num_envs: int = 1, *, python: str | Path | None = None,
                 timeout: float = 60.0, init_timeout: float | None = None,
                 keyframe: str | None = None, options: dict[str, Any] | None = None,
                 progress: bool = True, data_plane: str = "shm",
                 device: int | None = None) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        self.engine = engine
        self.num_envs = int(num_envs)
        self.timeout = float(timeout)
        self._closed = False
        self._plane: DataPlane = create_plane(data_plane, device)
        payload: dict[str, Any] = {"engine": engine, "num_envs": self.num_envs,
                                   "keyframe": keyframe, "options": options or {}}
        if model is not None:
            payload["model"] = models.resolve(model)
        payload.update(self._plane.init_fields())
        self.python = resolve_python(python)
        reap_orphans()
        started = time.perf_counter()
        self._process = WorkerProcess(self.python)
        self._channel = Channel(self._process)
        self._finalizer = weakref.finalize(self, _shutdown, self._channel, self._process,
                                           self._plane)
        try:
            self.worker_info = self._handshake(engine)
            bar = ProgressBar(f"{engine} init", enabled=progress)
            try:
                reply = self._channel.request(Command.INIT, payload,
                                              init_timeout or self.timeout, bar.update)
            finally:
                bar.close()
            self.layout = Layout.from_reply(reply)
            attach = self._plane.allocate(self.layout, self.num_envs)
            self._channel.request(Command.ATTACH, attach, self.timeout)
            self._plane.attached()
        except BaseException:
            self.close()
            raise
        self.startup_seconds = time.perf_counter() - started
        views = self._plane.views
        self._ctrl, self._qpos, self._qvel = views["ctrl"], views["qpos"], views["qvel"]
        self._reset_mask = views["reset_mask"]

    def _handshake(self, engine: str) -> dict[str, Any]:
        try:
            hello = self._channel.hello(self.timeout)
        except WorkerDied as exc:
            raise SetupError(
                f"the worker on {self.python} did not speak the unisim protocol: {exc}",
                hint=f"check that {self.python} is Python >= 3.8 with numpy and msgpack "
                     f"installed ({self.python} -m pip install numpy msgpack) and the engine's "
                     f"SDK") from exc
        if hello.get("protocol") != protocol.VERSION:
            raise SetupError(
                f"worker speaks protocol version {hello.get('protocol')}, host speaks "
                f"{protocol.VERSION}", hint="install the same unisim version on both sides")
        if engine not in hello.get("engines", []):
            raise SetupError(f"worker has no engine {engine!r}",
                             hint=f"choose one of {hello.get('engines')}")
        return hello

    # -- state -----------------------------------------------------------------------

    @property
    def worker_pid(self) -> int:
        return self._process.pid

    @property
    def ctrl(self) -> npt.NDArray[np.float64]:
        self._check_open()
        return self._ctrl

    @property
    def qpos(self) -> npt.NDArray[np.float64]:
        self._check_open()
        return self._qpos

    @property
    def qvel(self) -> npt.NDArray[np.float64]:
        self._check_open()
        return self._qvel

    def state(self) -> dict[str, npt.NDArray[Any]]:
        """Every slot, by name, as numpy views (zero-copy)."""
        self._check_open()
        return dict(self._plane.views)

    def tensors(self) -> dict[str, Any]:
        """Every slot as a torch tensor sharing the slot's memory (needs torch)."""
        self._check_open()
        return self._plane.tensors()

    # -- commands ----------------------------------------------------------------------

    def step(self, ctrl: Any = None, substeps: int = 1) -> None:
        """Write ``ctrl`` (array-like or tensor, broadcast to ``(num_envs, nu)``) and step."""
        self._check_open()
        if ctrl is not None:
            self._plane.write(self._ctrl, ctrl, "ctrl")
        if substeps == 1:
            payload: dict[str, Any] = {}
        elif isinstance(substeps, (int, np.integer)) and not isinstance(substeps, bool) \
                and substeps >= 1:
            payload = {"substeps": int(substeps)}
        else:
            raise ValueError(f"substeps must be a positive int, got {substeps!r}")
        self._exchange(Command.STEP, payload)

    def reset(self, env_ids: Any = None, qpos: Any = None, qvel: Any = None) -> None:
        """Reset envs ``env_ids`` (all if None) to ``qpos``/``qvel`` or the initial state."""
        self._check_open()
        rows = _rows(env_ids, self.num_envs)
        if qpos is not None:
            qpos = _checked(qpos, (len(rows), self.layout.nq), "qpos")
        if qvel is not None:
            qvel = _checked(qvel, (len(rows), self.layout.nv), "qvel")
        self._reset_mask[:] = 0
        self._reset_mask[rows] = 1
        if qpos is not None:
            self._plane.write(self._qpos, qpos, "qpos", rows)
        if qvel is not None:
            self._plane.write(self._qvel, qvel, "qvel", rows)
        self._exchange(Command.RESET, {"qpos": qpos is not None, "qvel": qvel is not None})

    def _exchange(self, command: int, payload: dict[str, Any]) -> None:
        """A request whose worker reads the host's writes and writes what the host reads next."""
        self._plane.inputs_written()
        self._channel.request(command, payload, self.timeout)
        self._plane.outputs_awaited()

    def ping(self) -> float:
        """One empty round trip; returns its duration in seconds."""
        self._check_open()
        start = time.perf_counter()
        self._channel.request(Command.PING, {}, self.timeout)
        return time.perf_counter() - start

    def request(self, command: int, payload: dict[str, Any],
                timeout: float | None = None) -> dict[str, Any]:
        """A raw protocol request (for engine-specific commands)."""
        self._check_open()
        return self._channel.request(command, payload, timeout or self.timeout)

    # -- lifecycle --------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise BackendDead("the backend is closed")
        if self._channel.dead is not None:
            raise BackendDead(f"the backend's worker is dead: {self._channel.dead}") \
                from self._channel.dead

    def close(self) -> None:
        """Shut the worker down and release the shared memory; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._finalizer()

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"worker pid {self.worker_pid}"
        return f"<unisim.Backend {self.engine} num_envs={self.num_envs} ({state})>"


def _shutdown(channel: Channel, process: WorkerProcess, plane: DataPlane) -> None:
    """Stop the worker politely, then firmly, and free the slots. Never raises."""
    try:
        if channel.dead is None and process.alive():
            try:
                channel.request(Command.SHUTDOWN, {}, SHUTDOWN_TIMEOUT)
            except (UnisimError, OSError):
                pass
        process.close_pipes()
        process.reap(grace=SHUTDOWN_TIMEOUT)
    finally:
        channel.close()
        plane.close()


def _rows(env_ids: Any, num_envs: int) -> npt.NDArray[np.int64]:
    if env_ids is None:
        return np.arange(num_envs)
    rows = as_numpy(env_ids)
    if rows.dtype == np.bool_:
        if rows.shape != (num_envs,):
            raise ValueError(f"a boolean env mask must have shape ({num_envs},), got {rows.shape}")
        return np.flatnonzero(rows)
    if rows.dtype.kind not in "iu":
        raise TypeError(f"env_ids must be integers or a boolean mask, got dtype {rows.dtype}")
    rows = rows.reshape(-1).astype(np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= num_envs):
        raise IndexError(f"env_ids must lie in [0, {num_envs}), got {rows.min()}..{rows.max()}")
    return rows


def _checked(value: Any, shape: Sequence[int], name: str) -> npt.NDArray[np.float64]:
    try:
        array = np.broadcast_to(as_numpy(value).astype(np.float64, copy=False), tuple(shape))
    except ValueError:
        raise ValueError(f"{name} must broadcast to shape {tuple(shape)}, "
                         f"got {np.shape(value)}") from None
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return array

