"""A backend's step, bound when the backend starts: ``Backend.step`` is one call into here.

The step object holds what a step touches (the ctrl slot and the plane's write, the nan
policy's check, the warnings slot, the workers' channels; a device plane's ordering, the
shared rows' queue, the physics pushes) and does the whole step: finish a request an
interrupt left in flight, write and check ctrl, send STEP to every worker before waiting
for any, collect the replies, check the warnings. Its strategy, pipe frames or the
shared-memory doorbell, is chosen once per start (the worker switches with it, on
DOORBELL); both report a failure on the step where it happens. Arguments arrive validated
(``Backend.step``).

On the common path (host memory, a numpy ctrl, nothing left in flight, nothing flagged) a
doorbell step runs in this module and ``protocol/doorbell.py`` alone
(tests/test_step_path.py counts it). The rare paths call out: a request to finish or a dead
worker (``pool``, ``channel``), frames on the pipe, a ctrl numpy cannot copy as it is (the
plane's ``write``), the ``"raise"`` check and flagged warnings (``sim_warnings``), a device
plane's ordering, shared rows, physics pushes.
"""

from __future__ import annotations

import abc
import functools
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from unisim_protocol import Command, schemas
from unisim_protocol import doorbell as bell

from .backend_physics import PhysicsControl
from .errors import UnisimError
from .planes import DataPlane
from .pool import HOST_SPIN, Member, WorkerPool
from .sim_warnings import WarningMonitor

CMD_STEP, REPLY, STATUS, STATUS_OK = bell.CMD_STEP, bell.REPLY, bell.STATUS, bell.STATUS_OK
REPLY_NEAR = bell.REPLY_NEAR
# Seconds between checks that the worker lives and its deadline holds, while the host sleeps
# on a doorbell reply.
WORKER_CHECK_EVERY = 0.02
Hook = Callable[[], None]


class Stepping(abc.ABC):
    """What both strategies share: the step around the exchange with the workers."""

    def __init__(self, pool: WorkerPool, plane: DataPlane, monitor: WarningMonitor,
                 fill_queue: Hook | None = None, physics: PhysicsControl | None = None,
                 ) -> None:
        """``fill_queue``: queues the chunks of a STEP, for workers that share rows;
        ``physics``: pushes the envs after the steps its spec says."""
        self.pool = pool
        self._channels = [member.channel for member in pool.members]
        ctrl = plane.views["ctrl"]
        self._ctrl = ctrl  # the slot, for the nan policy's check
        self._host_ctrl = ctrl if isinstance(ctrl, np.ndarray) else None  # numpy copies into it
        self._write = functools.partial(plane.write, "ctrl")
        self._check = monitor.ctrl_check
        self._flags, self._clean, self._warned = monitor.flags, monitor.clean, monitor.after_step
        inputs = plane.ordering()  # a device plane's event
        self._inputs = inputs if fill_queue is None else (*inputs, fill_queue)
        self._physics = physics
        self._inflight: list[int] = []  # ids rung outside the pipe, not all replies read

    def step(self, ctrl: Any, substeps: int, timeout: float) -> npt.NDArray[np.int64] | None:
        """Write ``ctrl`` (unless None) and step every worker ``substeps`` times; the envs
        that the nan policy resets, if any (the backend resets them)."""
        if self._inflight:
            self.settle()
        else:
            for channel in self._channels:
                if channel.dead is not None or channel.pending is not None:
                    self.settle()
                    break
        if ctrl is not None:
            target = self._host_ctrl
            if target is None:
                self._write(ctrl)
            else:
                try:
                    np.copyto(target, ctrl, casting="same_kind")
                except (TypeError, ValueError, RuntimeError):  # a GPU tensor, a wrong shape
                    self._write(ctrl)  # converts it, or says what shape and dtype it needs
        if self._check is not None:
            self._check(self._ctrl)
        for call in self._inputs:
            call()
        self._exchange(substeps, timeout)
        if self._physics is not None:
            self._physics.push_if_due(timeout)
        if self._clean is not None and self._flags.tobytes() != self._clean:
            return self._warned()
        return None

    def settle(self) -> None:
        """Wait for any request a KeyboardInterrupt left in flight, before touching slots;
        raise if a worker is dead."""
        self.pool.settle()

    @abc.abstractmethod
    def soon(self) -> None:
        """Tell the workers a STEP is near (``Backend.step_soon``)."""

    @abc.abstractmethod
    def _exchange(self, substeps: int, timeout: float) -> None:
        """STEP to every worker, then every reply."""


class PipeStepping(Stepping):
    """A STEP frame to each worker, then each reply frame."""

    def __init__(self, pool: WorkerPool, plane: DataPlane, monitor: WarningMonitor,
                 fill_queue: Hook | None = None, physics: PhysicsControl | None = None,
                 ) -> None:
        super().__init__(pool, plane, monitor, fill_queue, physics)
        self._payloads: dict[int, dict[str, Any]] = {}  # STEP's, per substeps value

    def soon(self) -> None:
        """Nothing to tell: a worker on the pipe polls it, then blocks in its read."""

    def _exchange(self, substeps: int, timeout: float) -> None:
        payload = self._payloads.get(substeps)
        if payload is None:  # fields at their defaults left out (the worker fills them in):
            fields = schemas.FIELDS["STEP"]  # the usual STEP is an empty map, packed unwalked
            payload = {name: value for name, value
                       in schemas.request("STEP", substeps=substeps).items()
                       if value != fields[name][1]}
            self._payloads[substeps] = payload
        self.pool.call(Command.STEP, payload, timeout)


class DoorbellStepping(Stepping):
    """Sequence counters in each worker's arena line; no syscall when both sides spin.

    Its step path is flat on purpose: at N=1 a step takes a few microseconds, and each call
    layer on that path costs a tenth of one or more (``benchmarks/latency/round_trips.py``).
    """

    def __init__(self, pool: WorkerPool, plane: DataPlane, monitor: WarningMonitor,
                 fill_queue: Hook | None = None, physics: PhysicsControl | None = None, *,
                 lines: list[Any], spare_core: bool) -> None:
        """``lines``: the workers' doorbell lines, in the pool's order. ``spare_core``:
        whether a core is left over when the workers' threads step. If not, neither side
        dozes and spins through the other's long turn (``doorbell.Forecast``): the host
        would take a core from the workers' threads as they finish a step, and a worker one
        from the host's (a policy's) as it works out the next ctrl."""
        super().__init__(pool, plane, monitor, fill_queue, physics)
        self.lines = [bell.Line(words) for words in lines]
        for words in lines:
            words[:] = 0  # a restart reuses the lines; request ids start again from 1
        pool.call(Command.DOORBELL, schemas.request("DOORBELL", spare_core=spare_core), 10.0)
        # The workers now wait on their lines, not the pipe.
        pool.signal = LineSignal(pool.members, self.lines)
        self._ends = [(member, member.channel.ids, line, line.words)
                      for member, line in zip(pool.members, self.lines, strict=True)]
        self._forecast = bell.Forecast(HOST_SPIN, spare_core)  # when the replies are due
        self._sent = 0.0  # time.perf_counter() when the last STEP was rung
        self._waited = 0.0  # how long its replies took
        self._timeout = 0.0

    def settle(self) -> None:
        self.pool.settle()
        if self._inflight:
            self._collect()

    def soon(self) -> None:
        for line in self.lines:
            line.near(bell.REQUEST, bell.REQUEST_NEAR, bell.WORKER_WAITING)

    def _exchange(self, substeps: int, timeout: float) -> None:
        ids: list[int] = []
        self._inflight = ids
        for _, numbers, line, _ in self._ends:  # alive: settled
            request_id = next(numbers)
            line.ring(request_id, CMD_STEP, substeps)
            ids.append(request_id)
        self._timeout = timeout
        sent = self._sent = time.perf_counter()
        if self._waited:  # the last wait, learnt while the workers step (off the critical path)
            self._forecast.observe(self._waited)
        self._collect()
        self._waited = time.perf_counter() - sent

    def _collect(self) -> None:
        """Wait for each reply in flight, then read the frames its worker wrote for it if its
        STATUS says there are any (and the wait has not read them); raise the first failure
        once every reply is in. A reply due within the spin (a short step) costs no more
        than the spin."""
        failure: UnisimError | None = None
        doze, spin = self._forecast.plan
        inflight = self._inflight  # paired by index: zip(strict=True) costs 0.17 us on 3.11
        for k, (member, _, line, words) in enumerate(self._ends):
            request_id = inflight[k]
            try:
                value = words[REPLY]
                if value != request_id and not doze:
                    value = line.spin(REPLY, value, spin)
                    spin = 0.0  # spent
                read = value != request_id and self._sleep_until(member, line, request_id,
                                                                 value, doze, spin)
                words[REPLY_NEAR] = 0  # the reply came: a mark for it is spent
                if words[STATUS] != STATUS_OK and not read:  # frames on the pipe
                    member.channel.collect(request_id, Command.STEP, self._timeout)
            except UnisimError as exc:
                failure = failure or exc
            doze = 0.0  # the first worker's reply came when due: the others' are due too
        self._inflight = []
        if failure is not None:
            self.pool.after_failure(failure)
            raise failure

    def _sleep_until(self, member: Member, line: Any, request_id: int, value: int,
                     doze: float, spin: float) -> bool:
        """The long wait: doze until the forecast, spin, then sleep in slices, checking
        between slices that the worker lives and the deadline has not passed. Whether it
        read the request's frames from the pipe (a worker that reports progress)."""
        channel, process, timeout = member.channel, member.process, self._timeout
        deadline = self._sent + timeout
        doze = max(0.0, doze - (time.perf_counter() - self._sent))
        read = False
        checked = self._sent  # when the worker was last checked on (rung, here)

        def between_slices() -> None:
            nonlocal deadline, read, checked
            now = time.perf_counter()
            if now - checked < WORKER_CHECK_EVERY:  # a doze's end: too soon to check again
                return
            checked = now
            if not process.alive():
                raise channel.died("during STEP", timeout)
            if channel.has_input():  # PROGRESS frames: the answer comes on the pipe too,
                channel.collect(request_id, Command.STEP, timeout)  # each re-arming it
                read = True
                deadline = time.perf_counter() + timeout
            elif now > deadline:
                raise channel.died("during STEP", timeout, timed_out=True)

        while value != request_id:
            value = line.await_change(REPLY, value, bell.HOST_WAITING, spin, WORKER_CHECK_EVERY,
                                      between_slices, doze, REPLY_NEAR)
            doze = 0.0
        return read


class LineSignal:
    """Pipe requests rung on the workers' doorbell lines: the line announces the frame (the
    worker waits on the line, not the pipe), and the host spins on the line's REPLY word,
    which the worker bumps after writing its reply frame, before reading that frame. A quick
    reply (a reset, a ping) then costs no wake-up of the host. No reference to the pool,
    which holds it: that cycle would keep the arena mapped until a gc pass."""

    def __init__(self, members: list[Member], lines: list[Any]) -> None:
        self.line_of = {id(m): line for m, line in zip(members, lines, strict=True)}

    def announce(self, member: Member, request_id: int) -> None:
        self.line_of[id(member)].ring(request_id, bell.CMD_PIPE)

    def await_reply(self, member: Member, request_id: int) -> None:
        line = self.line_of[id(member)]
        replied = line.words[REPLY]
        if replied != request_id:
            line.spin(REPLY, replied, HOST_SPIN)
