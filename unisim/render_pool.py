"""Batched offscreen rendering on a pool of worker processes, one or more per GPU.

The pool owns one arena (``slots.Arena``) of ``max_batch_size`` rows: the states to draw
(qpos, mocap) and the images (RGB, depth), packed so that a batch of N images of H x W
is one contiguous ``(N, H, W, 3)`` array. Every worker maps that arena; a render splits
the N rows into one contiguous range per worker, sends every worker its range before
waiting for any, and the workers draw their rows in place. Only row ranges cross the
pipes. The workers are our own worker processes (engine ``render``) on any interpreter,
so nothing depends on the host's multiprocessing start method.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from unisim_protocol import Command, schemas

from . import models
from .arrays import as_numpy
from .backend import Backend
from .capture import check_image_size
from .errors import (
    BackendDead,
    ProtocolError,
    RemoteError,
    RenderWorkerDied,
    SetupError,
    UnisimError,
)
from .interpreter import resolve_python
from .lifecycle import Workers
from .pool import Member, WorkerPool, split_rows
from .randomizer import Randomizer
from .slots import Arena, SlotSpec, reap_orphans

DeviceIds = int | Sequence[int] | None


class RenderPool:
    """Render batches of states of one model with several worker processes.

    ``device_ids``: None renders wherever EGL's default device is (llvmpipe on CPU-only
    machines; set ``MUJOCO_GL=osmesa`` to use OSMesa); an int n uses EGL devices 0..n-1,
    a list those devices. Each device gets ``n_workers_per_device`` workers.
    ``max_batch_size`` (default and minimum: the number of workers) bounds the states per
    call and ``max_image_size`` the pixels per image. ``randomizer`` (a ``Randomizer``)
    enables ``randomize=True``. ``python`` is the workers' interpreter (default: this one).
    """

    def __init__(self, model: str | Path, device_ids: DeviceIds = None,
                 n_workers_per_device: int = 1, max_batch_size: int | None = None,
                 max_image_size: int = 512 * 512, randomizer: Randomizer | None = None,
                 python: str | Path | None = None, timeout: float = 60.0) -> None:
        self.devices = _devices(device_ids)
        if not _positive_int(n_workers_per_device):
            raise ValueError(f"n_workers_per_device must be a positive int, "
                             f"got {n_workers_per_device!r}")
        self.placement = [d for d in self.devices for _ in range(n_workers_per_device)]
        if max_batch_size is None:
            max_batch_size = len(self.placement)
        if not _positive_int(max_batch_size) or max_batch_size < len(self.placement):
            raise ValueError(f"max_batch_size must be an int >= the number of workers "
                             f"({len(self.placement)}), got {max_batch_size!r}")
        if not _positive_int(max_image_size):
            raise ValueError(f"max_image_size must be a positive int, got {max_image_size!r}")
        if randomizer is not None and not isinstance(randomizer, Randomizer):
            raise TypeError(f"randomizer must be a unisim.Randomizer, got {randomizer!r}")
        self.model = models.resolve(model)
        self.max_batch_size = int(max_batch_size)
        self.max_image_size = int(max_image_size)
        self.randomizer = randomizer
        self.python = resolve_python(python)
        self.timeout = float(timeout)
        self._res = Workers(self.python, "render")
        self._broken: RenderWorkerDied | None = None
        self._closed = False
        self._calls = 0  # randomised calls so far: part of each image's random seed
        self._finalizer = weakref.finalize(self, self._res.close)
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    # -- lifecycle --------------------------------------------------------------------

    def _start(self) -> None:
        reap_orphans()
        envs = [{} if d is None else {"MUJOCO_GL": "egl", "MUJOCO_EGL_DEVICE_ID": str(d)}
                for d in self.placement]
        options = {"randomizer": None if self.randomizer is None else self.randomizer.to_wire()}
        spec = {"engine": "render", "model": self.model, "num_envs": 1, "options": options}
        try:
            self._res.spawn(split_rows(self.max_batch_size, len(self.placement)), envs,
                            self.timeout)
            replies = self._res.init(lambda member: spec, self.timeout, progress=False)
            if self._res.arena is None:
                self._make_arena(replies[0])
            self._res.attach(lambda member: schemas.attach_request(self._arena.declaration()),
                             self.timeout)
        except UnisimError as exc:
            index = self._dead_index() if self._res.pool is not None else None
            who = "a render worker" if index is None else self._describe(index)
            self._res.stop()
            raise SetupError(f"{who} failed to start: {exc}",
                             hint="for GPU workers, check that the EGL device exists "
                                  "(MUJOCO_EGL_DEVICE_ID)") from exc

    def _make_arena(self, reply: dict[str, Any]) -> None:
        try:
            layout = schemas.parse_render_layout(reply)
        except schemas.SchemaError as exc:
            raise ProtocolError(f"the render worker's INIT reply is not a layout: {exc}") from None
        specs = [SlotSpec(s["name"], s["dtype"], tuple(s["shape"])) for s in layout["slots"]]
        specs += [SlotSpec("rgb", "|u1", (self.max_image_size * 3,)),
                  SlotSpec("depth", "<f4", (self.max_image_size,))]
        self.nq = int(layout["nq"])
        self.cameras = tuple(layout["cameras"])
        self.engine_version = str(layout["engine_version"])
        self._nominal = {name: np.asarray(layout[name + "0"])
                         for name in ("qpos", "mocap_pos", "mocap_quat")}
        arena = self._res.arena = Arena(specs, self.max_batch_size)
        for name, value in self._nominal.items():
            arena.views[name][:] = value

    @property
    def _arena(self) -> Arena:
        arena = self._res.arena
        if arena is None:
            raise BackendDead("the render pool is closed")
        return arena

    @property
    def _pool(self) -> WorkerPool:
        pool = self._res.pool
        if pool is None:
            raise BackendDead("the render pool has no workers; call restart()")
        return pool

    def _dead_index(self) -> int | None:
        """The index of the first worker whose channel died (the pool then kills the rest)."""
        members = self._pool.members
        return next((k for k, m in enumerate(members) if m.channel.dead is not None), None)

    def _describe(self, index: int) -> str:
        device = self.placement[index]
        where = "CPU" if device is None else f"EGL device {device}"
        return f"render worker {index} ({where}, pid {self._pool.pids[index]})"

    def restart(self) -> None:
        """Replace every worker by a fresh one (after ``RenderWorkerDied``)."""
        self._check_open()
        self._res.stop()
        self._broken = None
        self._start()

    def close(self) -> None:
        """Stop the workers and free the arena; safe to call twice."""
        self._closed = True
        self._finalizer()

    def _check_open(self) -> None:
        if self._closed:
            raise BackendDead("the render pool is closed")

    def __enter__(self) -> RenderPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self.placement)} workers"
        return f"<unisim.RenderPool {Path(self.model).name!r} ({state})>"

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the workers, in row order."""
        return self._pool.pids

    # -- rendering --------------------------------------------------------------------

    def render(self, width: int, height: int, states: Any = None,
               camera: str | int | None = None, depth: bool = False, randomize: bool = False,
               copy: bool = True) -> Any:
        """Render a batch: ``(N, H, W, 3)`` uint8, and ``(N, H, W)`` float32 depth in metres
        from the camera plane if ``depth``.

        ``states``: an ``(N, nq)`` qpos array (or tensor), or a dict with ``qpos`` and
        optionally ``mocap_pos`` ``(N, nmocap, 3)`` and ``mocap_quat`` ``(N, nmocap, 4)``
        (default: the model's); qvel does not change an image. Without states, the
        ``max_batch_size`` state rows as they stand (the last states given, initially
        the model's ``qpos0``). With ``copy=False`` the arrays are views of the shared
        image slots, overwritten by the next render.
        """
        self._check_usable(width, height, camera, randomize)
        rows = self.max_batch_size if states is None else self._write_states(states)
        return self._render(rows, width, height, camera, depth, randomize, copy, None)

    def render_from(self, sim: Backend, width: int, height: int,
                    camera: str | int | None = None, depth: bool = False,
                    randomize: bool = False, copy: bool = True) -> Any:
        """Render every env of the physics backend ``sim`` from its qpos slot, in place.

        The workers map ``sim``'s state arena and read its qpos rows directly: no state
        is copied. ``sim`` must simulate the same model, with at most ``max_batch_size``
        envs; mocap bodies keep their model positions.
        """
        self._check_usable(width, height, camera, randomize)
        if not isinstance(sim, Backend):
            raise TypeError(f"render_from needs a unisim.Backend, got {sim!r}")
        if sim.layout.nq != self.nq:
            raise ValueError(f"the backend's model has nq={sim.layout.nq}, this pool's model "
                             f"has nq={self.nq}: render_from needs the same model")
        self._check_batch(sim.num_envs)
        return self._render(sim.num_envs, width, height, camera, depth, randomize, copy,
                            sim.shared_arena())

    def _check_usable(self, width: int, height: int, camera: str | int | None,
                      randomize: bool) -> None:
        self._check_open()
        if self._broken is not None:
            raise BackendDead(f"the render pool lost {self._broken.who}; call restart() to "
                              "replace its workers") from self._broken
        check_image_size(width, height, self.max_image_size)
        if isinstance(camera, str):
            if camera not in self.cameras:
                raise ValueError(f"the model has no camera {camera!r}; its cameras: "
                                 f"{', '.join(self.cameras) or 'none'} (or None for the free "
                                 "camera)")
        elif camera is not None and (isinstance(camera, bool) or not isinstance(camera, int)
                                     or not -1 <= camera < len(self.cameras)):
            raise ValueError(f"camera must be a camera name, an id in [-1, {len(self.cameras)})"
                             f" or None, got {camera!r}")
        if randomize and self.randomizer is None:
            raise ValueError("randomize=True needs a pool made with "
                             "randomizer=unisim.Randomizer(seed=...)")

    def _check_batch(self, rows: int) -> None:
        if rows < 1:
            raise ValueError("states must hold at least one state")
        if rows > self.max_batch_size:
            raise ValueError(f"a batch of {rows} states is larger than this pool's "
                             f"max_batch_size of {self.max_batch_size}; create the pool with "
                             f"max_batch_size >= {rows} or render in smaller batches")

    def _write_states(self, states: Any) -> int:
        """Copy ``states`` into the shared state rows; returns the batch size."""
        fields = dict(states) if isinstance(states, dict) else {"qpos": states}
        unknown = set(fields) - set(self._nominal)
        if unknown or "qpos" not in fields:
            raise ValueError(f"states must be a qpos array or a dict with 'qpos' and optional "
                             f"'mocap_pos', 'mocap_quat'; got keys {sorted(fields)}")
        qpos = as_numpy(fields["qpos"])
        if qpos.ndim != 2 or qpos.shape[1] != self.nq:
            raise ValueError(f"qpos states must be an (N, {self.nq}) array, got {qpos.shape}")
        rows = int(qpos.shape[0])
        self._check_batch(rows)
        views = self._arena.views
        for name, nominal in self._nominal.items():
            value = as_numpy(fields[name]) if name in fields else nominal
            try:
                views[name][:rows] = np.broadcast_to(value, (rows, *nominal.shape))
            except ValueError:
                raise ValueError(f"{name} states must be ({rows}, "
                                 f"{', '.join(map(str, nominal.shape))}), "
                                 f"got {np.shape(value)}") from None
        return rows

    def _render(self, rows: int, width: int, height: int, camera: str | int | None,
                depth: bool, randomize: bool, copy: bool,
                source: dict[str, Any] | None) -> Any:
        pool = self._pool
        ranges = split_rows(rows, min(rows, len(pool.members)))
        busy = pool.members[:len(ranges)]
        share = {id(member): r for member, r in zip(busy, ranges, strict=True)}

        def payload(member: Member) -> dict[str, Any]:
            part = share[id(member)]
            request: dict[str, Any] = schemas.render_request(
                rows=(part.start, part.stop), width=width, height=height, camera=camera,
                depth=depth, randomize=randomize, call=self._calls, source=source)
            return request

        try:  # every worker gets its rows before any reply is awaited
            pool.call(Command.RENDER, payload, self.timeout, members=busy)
        except RemoteError as exc:
            if not exc.faulted:
                raise  # a plain error in the worker: the pool stays usable
            self._lost(exc)
        except UnisimError as exc:
            self._lost(exc)
        if randomize:
            self._calls += 1
        pixels = rows * width * height
        rgb = self._arena.views["rgb"].reshape(-1)[:pixels * 3].reshape(rows, height, width, 3)
        if not depth:
            return rgb.copy() if copy else rgb
        depths = self._arena.views["depth"].reshape(-1)[:pixels].reshape(rows, height, width)
        return (rgb.copy(), depths.copy()) if copy else (rgb, depths)

    def _lost(self, exc: UnisimError) -> None:
        """Record that a worker failed (the pool has killed the others) and raise."""
        index = self._dead_index() or 0
        who = self._describe(index)
        self._broken = RenderWorkerDied(
            f"{who} of {len(self.placement)} failed: {exc}\nthe pool is unusable until "
            "restart()", who, index, self.placement[index])
        raise self._broken from exc


def _devices(device_ids: DeviceIds) -> list[int | None]:
    if device_ids is None:
        return [None]
    if isinstance(device_ids, (int, np.integer)):
        if isinstance(device_ids, bool) or device_ids < 1:
            raise ValueError(f"device_ids as an int is a device count, at least 1, "
                             f"got {device_ids}")
        return list(range(int(device_ids)))
    ids = list(device_ids)
    if not ids or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                          and d >= 0 for d in ids):
        raise ValueError(f"device_ids must be None, a device count or a non-empty list of "
                         f"EGL device indices, got {device_ids!r}")
    return [int(d) for d in ids]


def _positive_int(value: Any) -> bool:
    return bool(isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                and value >= 1)
