"""Round trips: the raw pipe floor between two interpreters, and unisim's step and ping.

The floor is ``echo.py`` on the worker's interpreter answering frames of the size of a
unisim STEP request through blocking ``os.write``/``os.read`` on a pipe pair: two process
wake-ups and nothing else, the round trip of a pipe protocol whose ends do not spin (unisim's
both spin before they sleep, on either transport). More references say what a step
cannot go below: ``floor_peer.py`` answering a doorbell line at once (the handoff and the
waiting on both sides) or doing a STEP's work in the fewest lines of Python on either
transport (the least a Python worker can cost there), and the model's physics step
in-process.
"""

from __future__ import annotations

import mmap
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

import msgpack
import numpy as np

import unisim
import unisim_protocol as protocol
from benchmarks.systems import PY38
from unisim.pool import HOST_SPIN
from unisim.process import BOOTSTRAP

bell = protocol.doorbell

STEP_FRAME = protocol.framing.HEADER.size + len(
    protocol.pack(protocol.Kind.REQUEST, 1, protocol.Command.STEP, {}))


class PipeFloor:
    """A raw echo peer on ``python``; ``trip()`` is one write and one exact read."""

    def __init__(self, python: str, size: int = STEP_FRAME) -> None:
        self.process = subprocess.Popen([python, str(PY38 / "echo.py")],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.out, self.inp = self.process.stdin.fileno(), self.process.stdout.fileno()
        self.frame = bytes(size)
        self.size = size

    def trip(self) -> None:
        os.write(self.out, self.frame)
        got = len(os.read(self.inp, self.size))
        while got < self.size:
            got += len(os.read(self.inp, self.size - got))

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


class BellFloor:
    """A ``floor_peer.py`` peer on ``python`` over a doorbell line of its own; ``trip()`` rings
    it and waits for the answer as ``DoorbellStepping`` does (spin, then futex sleeps)."""

    STOP = 0xFFFFFFFF

    def __init__(self, python: str) -> None:
        self._start(python, bell.LINE_BYTES, [])

    def _start(self, python: str, size: int, args: list[str], **popen: Any) -> None:
        """Map a shared file of ``size`` bytes (a doorbell line first), start the peer on it
        with ``args`` and wait for its first answer, request 0."""
        fd, path = tempfile.mkstemp(prefix="unisim-bell-floor-", dir="/dev/shm")
        try:
            os.ftruncate(fd, size)
            self.mapping = mmap.mmap(fd, size)
            self.line = bell.Line(np.frombuffer(self.mapping, dtype="<u4", count=bell.WORDS))
            self.line.words[bell.REPLY] = self.STOP
            self.process = subprocess.Popen([python, str(PY38 / "floor_peer.py"),
                                             str(BOOTSTRAP.parent), path, *args], **popen)
            try:
                self._await(0, timeout=60.0)  # the peer maps the line, then answers request 0
            except BaseException:
                self.process.kill()
                raise
        finally:
            os.close(fd)
            os.unlink(path)
        self.request = 0

    def _await(self, request: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout

        def between_slices() -> None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the floor's peer did not answer (exit {self.process.poll()})")

        value = self.line.words[bell.REPLY]
        while value != request:
            value = self.line.await_change(bell.REPLY, value, bell.HOST_WAITING, 50e-6, 0.1,
                                           between_slices)

    def trip(self) -> None:
        self.request += 1
        self.line.ring(self.request, bell.CMD_STEP)
        if self.line.spin(bell.REPLY, self.request - 1, 50e-6) != self.request:  # a late answer
            self._await(self.request)

    def _stop(self) -> None:
        self.line.ring(self.STOP, bell.CMD_STEP)

    def close(self) -> None:
        self._stop()
        self.process.wait(timeout=10)
        del self.line  # the numpy view over the mapping, which must go first
        self.mapping.close()


class StepFloor(BellFloor):
    """The least doorbell step: a ``floor_peer.py`` peer does a STEP's work for one env of
    ``model`` (ctrl in, ``mj_step``, state out, in shared memory) in the fewest lines of
    Python, with the waiting of ``BellFloor``. What a Python worker on the doorbell cannot
    go below; unisim's step above it is the cost of its layers."""

    TRANSPORT = "doorbell"

    def __init__(self, python: str, model: str = "cartpole", **popen: Any) -> None:
        import mujoco

        from unisim import models

        path = models.resolve(model)
        physics = mujoco.MjModel.from_xml_path(path)
        size = bell.LINE_BYTES + 8 * (physics.nu + physics.nq + physics.nv)
        self._start(python, size, [path, self.TRANSPORT], **popen)


class PipeStepFloor(StepFloor):
    """The least pipe-path step: the same peer, asked by a msgpack STEP request in one
    frame on its stdin, answering with a msgpack reply frame, as unisim's wire format has
    it, each side spinning on the pipe before it blocks as unisim's pipe path does, without
    unisim's checks and layers on either side."""

    TRANSPORT = "pipe"

    def __init__(self, python: str, model: str = "cartpole") -> None:
        super().__init__(python, model, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         bufsize=0)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.out, self.inp = self.process.stdin.fileno(), self.process.stdout.fileno()
        self.replies = protocol.FrameReader(self.inp)  # for its wait only: the reads are plain

    def trip(self) -> None:
        self.request += 1
        body = msgpack.packb([protocol.Kind.REQUEST, self.request, protocol.Command.STEP, {}])
        os.write(self.out, protocol.framing.header(len(body)) + body)
        self.replies.ready(HOST_SPIN)  # the pipe path's spin, then a blocking read
        reply = os.read(self.inp, 4096)  # a small frame written in one write comes whole
        msgpack.unpackb(reply[protocol.framing.HEADER.size:])

    def _stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()


def physics_step(model: str = "cartpole") -> Callable[[], object]:
    """One in-process ``mj_step`` of ``model`` in one ``MjData``: the physics a worker's
    MuJoCo engine runs for a STEP of one env (its single stepper), without the copies
    around it."""
    import mujoco

    from unisim import models

    physics = mujoco.MjModel.from_xml_path(models.resolve(model))
    data = mujoco.MjData(physics)
    return lambda: mujoco.mj_step(physics, data)


def pin_apart(peers: list[int], host: int = 0) -> Callable[[], None]:
    """Pin process ``host`` (0: this one) to one core and every peer (by pid) to another,
    where it may use two; returns what restores its cores.

    A pipe round trip between two processes on one core takes a few microseconds, across
    two cores tens (on small VMs); the scheduler settles which per pair of processes, so
    unpinned, a floor and the round trip it is the floor of can land in different modes and
    their ratio flips from run to run. Pinned, every round trip crosses cores."""
    cores = os.sched_getaffinity(host)
    if len(cores) < 2:
        return lambda: None
    first, second = sorted(cores)[:2]
    for pid in peers:
        os.sched_setaffinity(pid, {second})
    os.sched_setaffinity(host, {first})
    return lambda: os.sched_setaffinity(host, cores)


def trips(call: Callable[[], object], count: int, warmup: int = 20) -> list[float]:
    """Durations in seconds of ``count`` calls, after ``warmup`` untimed ones."""
    for _ in range(warmup):
        call()
    clock = time.perf_counter
    out = []
    for _ in range(count):
        start = clock()
        call()
        out.append(clock() - start)
    return out


def cartpole(python: str, **options: Any) -> unisim.Backend:
    """The trivial model: one cartpole (its physics step alone is the "physics alone" row: a
    few microseconds, MuJoCo's fixed cost per step, not the model's)."""
    return unisim.Backend("mujoco", model="cartpole", num_envs=1, python=python,
                          progress=False, **options)
