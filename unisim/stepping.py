"""How a STEP reaches the workers: pipe frames, or the shared-memory doorbell.

Chosen once, when the backend starts (the worker switches with it, on DOORBELL); both
send to every worker before waiting for any, and both report a failure on the step
where it happens. Arguments arrive validated (``Backend.step``).
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import unisim.protocol as protocol

from .errors import UnisimError
from .pool import HOST_SPIN, Member, WorkerPool

bell = protocol.doorbell
Command = protocol.Command
CMD_STEP, REPLY, STATUS, STATUS_OK = bell.CMD_STEP, bell.REPLY, bell.STATUS, bell.STATUS_OK
SLICE = 0.02  # seconds between liveness and deadline checks while sleeping


class Stepping(Protocol):
    def settle(self) -> None:
        """Wait for any request a KeyboardInterrupt left in flight, before touching slots;
        raise if a worker is dead (``step`` comes right after it and does not check again)."""

    def step(self, substeps: int, timeout: float) -> None: ...


class PipeStepping:
    """A STEP frame to each worker, then each reply frame."""

    def __init__(self, pool: WorkerPool) -> None:
        self.pool = pool

    def settle(self) -> None:
        self.pool.settle()

    def step(self, substeps: int, timeout: float) -> None:
        payload: dict[str, Any] = {} if substeps == 1 else {"substeps": substeps}
        self.pool.call(Command.STEP, payload, timeout)


class DoorbellStepping:
    """Sequence counters in each worker's arena line; no syscall when both sides spin.

    Its step path is flat on purpose: at N=1 a step takes a few microseconds, and each call
    layer on that path costs a tenth of one or more (``benchmarks/latency.py``).
    """

    def __init__(self, pool: WorkerPool, lines: list[Any], spare_core: bool) -> None:
        """``spare_core``: whether a core is left over when the workers' threads step. If
        not, neither side dozes and spins through the other's long turn
        (``doorbell.Forecast``): the host would take a core from the workers' threads as
        they finish a step, and a worker one from the host's (a policy's) as it works out
        the next ctrl."""
        self.pool = pool
        self.lines = [bell.Line(words) for words in lines]
        for words in lines:
            words[:] = 0  # a restart reuses the lines; request ids start again from 1
        pool.call(Command.DOORBELL, {"spare_core": spare_core}, 10.0)  # the worker's own spin
        # The workers now wait on their lines, not the pipe.
        pool.signal = LineSignal(pool.members, self.lines)
        self._ends = [(member, member.channel, line, line.words)
                      for member, line in zip(pool.members, self.lines, strict=True)]
        self._inflight: list[int] = []  # request ids sent, not all replies seen
        self._forecast = bell.Forecast(HOST_SPIN, spare_core)  # when the replies are due
        self._sent = 0.0  # time.perf_counter() when the last STEP was rung
        self._waited = 0.0  # how long its replies took
        self._timeout = 0.0

    def settle(self) -> None:
        self.pool.settle()
        if self._inflight:
            self._collect()

    def step(self, substeps: int, timeout: float) -> None:
        ids: list[int] = []
        self._inflight = ids
        for _, channel, line, _ in self._ends:  # alive: settled
            request_id = channel.reserve_id()
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
        for k, (member, channel, line, words) in enumerate(self._ends):
            request_id = inflight[k]
            try:
                value = words[REPLY]
                if value != request_id and not doze:
                    value = line.spin(REPLY, value, spin)
                    spin = 0.0  # spent
                read = value != request_id and self._sleep_until(member, line, request_id,
                                                                 value, doze, spin)
                if words[STATUS] != STATUS_OK and not read:  # frames on the pipe
                    channel.collect(request_id, Command.STEP, self._timeout)
            except UnisimError as exc:
                failure = failure or exc
            doze = 0.0  # the first worker's reply came when due: the others' are due too
        self._inflight = []
        if failure is not None:
            self.pool.after_failure(failure)
            raise failure

    def _sleep_until(self, member: Any, line: Any, request_id: int, value: int, doze: float,
                     spin: float) -> bool:
        """The long wait: doze until the forecast, spin, then sleep in slices, checking
        between slices that the worker lives and the deadline has not passed. Whether it
        read the request's frames from the pipe (a worker that reports progress)."""
        channel, process, timeout = member.channel, member.process, self._timeout
        deadline = self._sent + timeout
        doze = max(0.0, doze - (time.perf_counter() - self._sent))
        read = False

        def between_slices() -> None:
            nonlocal deadline, read
            if not process.alive():
                raise channel.died("during STEP", timeout)
            if channel.has_input():  # PROGRESS frames: the answer comes on the pipe too,
                channel.collect(request_id, Command.STEP, timeout)  # each re-arming it
                read = True
                deadline = time.perf_counter() + timeout
            elif time.perf_counter() > deadline:
                raise channel.died("during STEP", timeout, timed_out=True)

        while value != request_id:
            value = line.await_change(REPLY, value, bell.HOST_WAITING, spin, SLICE,
                                      between_slices, doze)
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
