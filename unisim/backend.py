"""The host-side backend: a simulator in a worker process that feels in-process."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt

from unisim_protocol import Command, schemas
from unisim_protocol import doorbell as bell

from . import models, split
from .arrays import checked_values, env_rows
from .backend_physics import PhysicsControl
from .capture import ImageSlot
from .errors import BackendDead, SetupError
from .interpreter import resolve_worker
from .layout import Layout, merged_report
from .lifecycle import Workers
from .physics_randomization import PhysicsRandomization
from .planes import DataPlane
from .planes import create as create_plane
from .pool import RowRequests, WorkerPool
from .sim_warnings import WarningMonitor, check_policy
from .slots import reap_orphans
from .stepping import DoorbellStepping, PipeStepping, Stepping

SETUP_TIMEOUT = 60.0
PING = schemas.request("PING")


class Backend:
    """``num_envs`` simulations of one scene, run by an engine in worker processes.

    State lives in shared memory: ``qpos``, ``qvel`` and ``ctrl`` are numpy views of shape
    ``(num_envs, nq | nv | nu)`` that the workers update in place on every ``step`` and
    ``reset``; ``tensors()`` gives torch views of the same memory. ``split.choose`` splits
    the envs among worker processes from the engine's capabilities (one worker with every
    core for an engine with threads of its own; one per core for a single-threaded one,
    sharing their rows where it can); ``workers=`` and ``threads=`` override it, and
    ``sim.split`` says what was chosen and why.

    ``data_plane="cuda"`` (engines whose state lives on a GPU: ``"mjx"``, ``"isaacgym"`` on
    its GPU pipeline) puts the engine's slots in memory of GPU ``device`` shared with one
    worker by CUDA IPC instead: they are then torch CUDA tensors, and a step is ordered on
    torch's current stream with no host copy (docs/cuda-ipc.md). Naming a ``device`` also
    defaults to one worker.

    ``nan_policy`` says what a NaN or infinite ctrl does: ``"warn"`` (default: step as
    MuJoCo does, flag the envs in ``warnings`` and log them), ``"raise"`` (``ValueError``
    before stepping) or ``"reset"`` (as warn, then reset them); see ``sim_warnings``.

    ``randomization`` (a ``PhysicsRandomization``) gives every env its own physics,
    drawn at start and, by default, at each of its resets (docs/randomization.md).
    """

    def __init__(self, engine: str = "mujoco", model: str | Path | None = None,
                 num_envs: int = 1, *, python: str | Path | None = None,
                 workers: int | None = None, threads: int | None = None,
                 timeout: float = 60.0,
                 init_timeout: float | None = None, keyframe: str | None = None,
                 options: dict[str, Any] | None = None, progress: bool = True,
                 doorbell: bool = True, data_plane: str = "shm",
                 device: int | None = None, nan_policy: str = "warn",
                 randomization: PhysicsRandomization | None = None) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) \
                or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        if randomization is not None and not isinstance(randomization, PhysicsRandomization):
            raise TypeError("randomization must be a unisim.PhysicsRandomization, got "
                            f"{randomization!r}")
        self.engine = engine
        self.nan_policy = check_policy(nan_policy)
        self.num_envs = int(num_envs)
        self.timeout = float(timeout)
        self._closed = False
        self._lock = threading.Lock()
        self._images = ImageSlot()
        self._plane: DataPlane = create_plane(data_plane, device)
        self._plane.check_workers(workers)
        split.check_asked(self.num_envs, workers, threads)  # before anything starts
        self._asked = (workers, threads)
        self.split: split.Split | None = None  # chosen once the first worker said hello
        self._spec: dict[str, Any] = {"engine": engine, "keyframe": keyframe,
                                      "options": options or {}}
        if model is not None:
            self._spec["model"] = models.resolve(model)
        self.randomization = randomization
        self._physics: PhysicsControl | None = None
        if randomization is not None:
            self._spec["physics"] = randomization.to_wire()
        self._spec.update(self._plane.init_fields())
        # Setup (interpreter start, imports, scene building) is slow and bursty; a short
        # per-step ``timeout`` must not make it fail.
        self._init_timeout = init_timeout or max(self.timeout, SETUP_TIMEOUT)
        self._progress = progress
        self._doorbell = doorbell
        self.python, self._worker_env = resolve_worker(engine, python)
        reap_orphans()
        self._resources = Workers(self.python, engine, queue=True)
        self._pids: list[int] = []
        self._finalizer = weakref.finalize(self, _release, self._resources, self._plane)
        started = time.perf_counter()
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        self.startup_seconds = time.perf_counter() - started

    def _start(self) -> None:
        """Spawn the workers, build the scene, attach the slots (created on first start)."""
        workers = self._resources
        pool, chosen = self._spawn()
        self._pool = pool
        self._pids = pool.pids
        queue = workers.queue_fields(self.num_envs) if self._shared else lambda m: {}
        replies = workers.init(lambda m: {
            **self._spec, "num_envs": len(m.rows), "first_env": m.rows.start,
            "total_envs": self.num_envs, **queue(m)}, self._init_timeout, self._progress)
        owners = self._owners
        layout = Layout.from_replies(replies[:len(owners)])
        self.report = merged_report(replies[:len(owners)], [m.rows for m in owners])
        if workers.arena is None:
            self.layout = layout
            workers.arena = self._plane.allocate(layout, self.num_envs, lines=len(pool.members))
            self._reset_mask = self._plane.views["reset_mask"]
            names = replies[0].get("report", {}).get("warnings", ())
            self._monitor = WarningMonitor(self.nan_policy, self._plane.views.get("warnings"),
                                           names, self.num_envs)
        elif layout != self.layout:
            raise SetupError("the restarted workers report a different layout",
                             hint="the model or the worker's engine changed on disk")
        arena = workers.arena
        line = {id(m): k for k, m in enumerate(pool.members)}
        workers.attach(lambda m: self._plane.attach_payload(arena, m.rows, line[id(m)]),
                       self.timeout)
        self._rows = RowRequests(pool, self._owners, self._reset_mask, self._plane.ordering())
        if self.randomization is not None:  # first start: draw; restart: the same values
            if self._physics is None:
                self._physics = PhysicsControl(self.randomization, self._plane.views,
                                               self.num_envs)
            self._physics.start(self._rows, self.timeout)
        # workers that share rows: the queue's own fill, one call before each STEP
        fill = workers.queue.fill if self._shared and workers.queue is not None else None
        self._stepping: Stepping = (
            DoorbellStepping(pool, self._plane, self._monitor, fill, self._physics,
                             lines=arena.doorbells, spare_core=chosen.spare_core())
            if self._doorbell and bell.AVAILABLE
            else PipeStepping(pool, self._plane, self._monitor, fill, self._physics))

    def _spawn(self) -> tuple[WorkerPool, split.Split]:
        """Start the workers of the split (the pool, and the split). An explicit ``workers=``
        starts every worker at once; otherwise one worker starts, says what its engine can
        do (DESCRIBE), the split is chosen from that, and the rest, if any, follow."""
        workers, threads = self._asked
        count = self.split.workers if self.split else workers or 1
        self.worker_info = self._resources.spawn(
            split.worker_rows(self._shared, self.num_envs, count), [self._worker_env] * count,
            self._init_timeout)
        if self.split is None:
            caps = self._resources.describe(self._spec["options"], self.num_envs,
                                            self._init_timeout)
            self.worker_info["capabilities"] = caps
            self.split = split.choose(caps, self.num_envs, workers=workers, threads=threads,
                                      one_device=self._plane.one_device,
                                      shareable=self.randomization is None)
            self._plane.check_workers(self.split.workers)
            self._spec["threads"] = self.split.threads
            rows = split.worker_rows(self._shared, self.num_envs, self.split.workers)
            self._resources.grow(rows, [self._worker_env] * (len(rows) - count),
                                 self._init_timeout)
        return self._resources.live(), self.split

    @property
    def _shared(self) -> bool:  # the workers share every row (split.Split.shared)
        return self.split is not None and self.split.shared

    @property
    def _owners(self) -> list[Any]:  # who answers for the rows: with shared rows, the first
        return self._pool.members[:1] if self._shared else self._pool.members

    def restart(self) -> None:
        """Replace the workers (dead or alive) by fresh ones over the same slots: views and
        tensors taken earlier stay valid; every env is back at its initial state."""
        with self._lock:
            if self._closed:
                raise BackendDead("the backend is closed")
            self._resources.stop()
            try:
                self._start()
            except BaseException:
                self._resources.stop()
                raise

    # -- state -----------------------------------------------------------------------

    @property
    def worker_pid(self) -> int:
        """The first worker's pid (see ``worker_pids`` for a pool)."""
        return self.worker_pids[0]

    @property
    def worker_pids(self) -> list[int]:
        """The workers' pids (the last ones, once closed)."""
        return self._pids

    @property
    def ctrl(self) -> Any:  # numpy (data_plane="shm") or a torch CUDA tensor ("cuda")
        self._check_open()
        return self._plane.views["ctrl"]

    @property
    def qpos(self) -> Any:  # numpy (data_plane="shm") or a torch CUDA tensor ("cuda")
        self._check_open()
        return self._plane.views["qpos"]

    @property
    def qvel(self) -> Any:  # numpy (data_plane="shm") or a torch CUDA tensor ("cuda")
        self._check_open()
        return self._plane.views["qvel"]

    @property
    def warnings(self) -> Any:
        """``(num_envs,)`` uint8: the engine's warnings in each env's last step, bit k
        meaning ``warning_names[k]`` (MuJoCo: bad ctrl, bad qacc, contact overflow, ...)."""
        self._check_open()
        return self._monitor.flags

    @property
    def warning_names(self) -> tuple[str, ...]:
        return self._monitor.names

    def state(self) -> dict[str, npt.NDArray[Any]]:
        """Every slot, by name, as numpy views (zero-copy)."""
        self._check_open()
        return dict(self._plane.views)

    def shared_arena(self) -> dict[str, Any]:
        """A declaration of the state arena that another worker of this user can map while
        this backend is open (a ``RenderPool`` reads qpos rows from it, uncopied)."""
        self._check_open()
        arena = self._resources.arena
        if arena is None:
            raise BackendDead("the backend is closed")
        return arena.declaration()

    def tensors(self) -> dict[str, Any]:
        """Every slot as a torch tensor sharing the slot's memory (needs torch)."""
        self._check_open()
        return self._plane.tensors()

    def block(self, names: Sequence[str]) -> Any:
        """Slots ``names``, adjacent in this order in the engine's layout, as one torch uint8
        tensor over their bytes: one copy of it copies them all (the task bridge's outputs)."""
        self._check_open()
        return self._plane.block(tuple(names))

    # -- commands ----------------------------------------------------------------------

    def step(self, ctrl: Any = None, substeps: int = 1) -> None:
        """Write ``ctrl`` (array-like or tensor, broadcast to ``(num_envs, nu)``) and step."""
        if substeps != 1 and (not isinstance(substeps, int | np.integer)
                              or isinstance(substeps, bool) or substeps < 1):
            raise ValueError(f"substeps must be a positive int, got {substeps!r}")
        with self._lock:
            if self._closed:
                raise BackendDead("the backend is closed")
            to_reset = self._stepping.step(ctrl, int(substeps), self.timeout)
        if to_reset is not None:
            self.reset(to_reset)

    def step_soon(self) -> None:
        """Say that ``step`` follows shortly, after some work of the caller's own (a task
        bridge's actions, copied and checked): workers asleep on their doorbell lines wake
        now and spin for it, so their wake-up overlaps that work. Does nothing without the
        doorbell (``doorbell=False``), whose workers wait on the pipe."""
        with self._lock:
            if not self._closed:
                self._stepping.soon()

    def reset(self, env_ids: Any = None, qpos: Any = None, qvel: Any = None) -> None:
        """Reset envs ``env_ids`` (all if None) to ``qpos``/``qvel`` or the initial state."""
        self._check_open()
        rows = env_rows(env_ids, self.num_envs)
        if qpos is not None:
            qpos = checked_values(qpos, (len(rows), self.layout.nq), "qpos")
        if qvel is not None:
            qvel = checked_values(qvel, (len(rows), self.layout.nv), "qvel")
        with self._lock:
            self._check_open()
            self._stepping.settle()
            if qpos is not None:
                self._plane.write("qpos", qpos, rows)
            if qvel is not None:
                self._plane.write("qvel", qvel, rows)
            physics = self._physics is not None and self._physics.redraw(rows)
            self._rows.call("RESET", rows, self.timeout, qpos=qpos is not None,
                            qvel=qvel is not None, physics=physics)

    # -- physics randomisation (backend_physics.py) -------------------------------------

    def randomize(self, env_ids: Any = None) -> None:
        """Draw new physics parameters for ``env_ids`` (all if None) and apply them now,
        mid-episode; their state is kept."""
        with self._lock:
            self._settled_physics().randomize(env_rows(env_ids, self.num_envs), self.timeout)

    def push(self, env_ids: Any = None, velocity: Any = None) -> None:
        """Add a velocity to the root of ``env_ids`` (all if None): ``velocity`` per env
        and push axis, or drawn from the randomization's ``Push``."""
        with self._lock:
            self._settled_physics().push(env_rows(env_ids, self.num_envs), velocity,
                                         self.timeout)

    def physics_parameters(self) -> dict[str, npt.NDArray[np.float64]]:
        """Each randomised parameter's values in effect, per env, by label (copies):
        scale factors, added amounts or set values as the parameter says."""
        with self._lock:
            return self._settled_physics().draws.parameters()

    def _settled_physics(self) -> PhysicsControl:
        self._check_open()
        if self._physics is None:
            raise ValueError("this backend randomises no physics; pass "
                             "Backend(randomization=unisim.PhysicsRandomization(...))")
        self._stepping.settle()
        return self._physics

    def capture(self, env_id: int = 0, camera: str | int | None = None, width: int = 320,
                height: int = 240) -> npt.NDArray[np.uint8]:
        """Render env ``env_id`` offscreen in its worker; returns an (H, W, 3) uint8 frame.

        ``camera`` is a model camera's name or id, or None for the free camera. The frame
        travels through a shared-memory image slot, never the pipe.
        """
        self._check_open()
        env = env_rows(env_id, self.num_envs)
        if env.shape != (1,):
            raise ValueError(f"env_id must be one env index, got {env_id!r}")
        if camera is not None and not isinstance(camera, str | int):
            raise TypeError(f"camera must be a camera name, id or None, got {camera!r}")
        image = self._images.declare(width, height)
        with self._lock:
            self._check_open()
            member = next(m for m in self._owners if env[0] in m.rows)
            self._pool.call(Command.CAPTURE, schemas.capture_request(
                env_id=int(env[0]) - member.rows.start, camera=camera, width=width,
                height=height, image=image), self.timeout, members=[member])
            return self._images.frame(width, height)

    def ping(self) -> float:
        """One empty round trip; returns its duration in seconds."""
        self._check_open()
        with self._lock:
            start = time.perf_counter()
            self._pool.call(Command.PING, PING, self.timeout)
            return time.perf_counter() - start

    def request(self, command: int, payload: dict[str, Any],
                timeout: float | None = None) -> list[dict[str, Any]]:
        """A raw protocol request to every worker (for engine-specific commands)."""
        self._check_open()
        with self._lock:
            return self._pool.call(command, payload, timeout or self.timeout)

    # -- lifecycle --------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise BackendDead("the backend is closed")
        dead = self._pool.dead
        if dead is not None:
            raise BackendDead(f"the backend's worker is dead: {dead}") from dead

    def close(self) -> None:
        """Shut the worker down and release the shared memory; safe to call twice."""
        if self._closed:
            return
        with self._lock:
            self._closed = True
            # Drop what holds views first (the pool too: a dead worker's error holds frames
            # that hold views), so the mapping and its descriptor go now, not at a gc pass.
            for name in ("_reset_mask", "_stepping", "_pool", "_rows", "_monitor", "_physics"):
                self.__dict__.pop(name, None)
            self._finalizer()
            self._images.close()

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"worker pid {self.worker_pid}"
        return f"<unisim.Backend {self.engine} num_envs={self.num_envs} ({state})>"


def _release(resources: Workers, plane: DataPlane) -> None:
    """Stop the workers, then free the slots (host arena, then the plane's). Never raises."""
    try:
        resources.close()
    finally:
        plane.close()
