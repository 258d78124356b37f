"""K worker processes serving contiguous row ranges of one set of slots.

A single-threaded engine (MuJoCo 3.x on Python 3.8, IsaacGym on CPU) uses one core per
worker; the host still sees one ``(num_envs, ...)`` array. Every command is sent to all
workers before any reply is awaited, so the workers run concurrently.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from unisim_protocol import Command, schemas

from .channel import Channel, Progress
from .errors import BackendDead, RemoteError, UnisimError
from .planes import Hooks
from .process import WorkerProcess

HOST_SPIN = 50e-6  # seconds the host spins for a reply before it sleeps


def split_rows(num_envs: int, workers: int) -> list[range]:
    """Contiguous, near-equal row ranges covering ``range(num_envs)``."""
    if not 1 <= workers <= num_envs:
        raise ValueError(f"workers must lie in [1, num_envs={num_envs}], got {workers}")
    bounds = [num_envs * k // workers for k in range(workers + 1)]
    return [range(lo, hi) for lo, hi in itertools.pairwise(bounds)]


@dataclass
class Member:
    process: WorkerProcess
    channel: Channel
    rows: range


class Signal(Protocol):
    """How a worker learns that a request frame waits on its pipe, and how the host waits
    for the reply frame, beyond the pipe itself."""

    def announce(self, member: Member, request_id: int) -> None: ...

    def await_reply(self, member: Member, request_id: int) -> None:
        """Return when the reply may be read (or not: the read blocks until it comes)."""


class PipeSignal:
    """The pipe alone: a worker reads its pipe, and the host polls it for ``HOST_SPIN``
    before its read blocks on the reply. A reply that comes within the spin (a ping, a
    small step) then costs no wake-up of the host: of a pipe round trip, the wake-ups on
    both sides are most."""

    def announce(self, member: Member, request_id: int) -> None:
        pass

    def await_reply(self, member: Member, request_id: int) -> None:
        member.channel.has_input(HOST_SPIN)


class WorkerPool:
    def __init__(self, python: str, rows: Sequence[range],
                 envs: Sequence[dict[str, str]] | None = None,
                 pass_fds: tuple[int, ...] = ()) -> None:
        """One worker per row range; ``envs``: extra environment variables per worker;
        ``pass_fds``: descriptors every worker inherits."""
        self.python = python
        self.pass_fds = pass_fds
        self.members: list[Member] = []
        self.signal: Signal = PipeSignal()  # stepping.DoorbellStepping swaps in its lines
        self.extend(rows, envs)

    def extend(self, rows: Sequence[range], envs: Sequence[dict[str, str]] | None = None,
               ) -> list[Member]:
        """Start one more worker per row range; returns the new members."""
        new = []
        for k, row_range in enumerate(rows):
            process = WorkerProcess(self.python, env=None if envs is None else envs[k],
                                    pass_fds=self.pass_fds)
            new.append(Member(process, Channel(process), row_range))
        self.members += new
        return new

    def send(self, member: Member, command: int, payload: dict[str, Any],
             timeout: float) -> int:
        """Send one request frame to ``member``; ``wait`` collects the reply."""
        request_id = member.channel.send(command, payload, timeout)
        self.signal.announce(member, request_id)
        return request_id

    def wait(self, member: Member, request_id: int,
             on_progress: Progress | None = None) -> dict[str, Any]:
        """The reply payload of ``member``'s request ``request_id``, in flight."""
        self.signal.await_reply(member, request_id)
        return member.channel.wait(on_progress)

    @property
    def dead(self) -> BaseException | None:
        """The first member's cause of death, if any member died."""
        for member in self.members:  # a plain loop: this runs on every step
            if member.channel.dead is not None:
                return member.channel.dead
        return None

    def hello(self, timeout: float, members: Sequence[Member] | None = None,
              ) -> list[dict[str, Any]]:
        return [m.channel.hello(timeout) for m in (self.members if members is None else members)]

    def call(self, command: int, payload: dict[str, Any] | Callable[[Member], dict[str, Any]],
             timeout: float, on_progress: Progress | None = None,
             members: Sequence[Member] | None = None) -> list[dict[str, Any]]:
        """Send ``command`` to ``members`` (default: all), then collect every reply.

        ``payload`` may be a function of the member. If any member fails, every other
        reply is still collected; a dead member takes the whole pool down.
        """
        self.check_alive()
        targets = self.members if members is None else members
        sent = []
        for member in targets:
            body = payload(member) if callable(payload) else payload
            try:
                sent.append(self.send(member, command, body, timeout))
            except UnisimError:
                self.kill()
                raise
        replies: list[dict[str, Any]] = []
        failure: UnisimError | None = None
        for k, member in enumerate(targets):  # paired by index: zip(strict=True) costs more
            try:
                replies.append(self.wait(member, sent[k], on_progress))
            except UnisimError as exc:
                failure = failure or exc
        if failure is not None:
            self.after_failure(failure)
            raise failure
        return replies

    def settle(self) -> None:
        """Finish requests whose wait was interrupted, so the slots are quiet; raise if a
        member is dead."""
        for member in self.members:
            member.channel.settle()

    def check_alive(self) -> None:
        for member in self.members:
            if member.channel.dead is not None:
                dead = member.channel.dead
                raise BackendDead(f"the backend's worker is dead: {dead}") from dead

    def after_failure(self, failure: BaseException) -> None:
        """Keep the pool after a plain remote error; kill every worker after anything else."""
        if not (isinstance(failure, RemoteError) and self.dead is None):
            self.kill()

    def kill(self) -> None:
        for member in self.members:
            member.process.kill()

    @property
    def pids(self) -> list[int]:
        return [m.process.pid for m in self.members]


class RowRequests:
    """Requests that act on some rows (RESET, PHYSICS): the rows are flagged in the
    ``reset_mask`` slot, and only the workers that answer for any of them are asked."""

    def __init__(self, pool: WorkerPool, owners: Sequence[Member], mask: npt.NDArray[Any],
                 ordering: Hooks) -> None:
        """``owners``: the members that answer for rows (of workers that share rows, the
        first); ``ordering``: the plane's calls before a request (``DataPlane.ordering``)."""
        self.pool, self.owners, self.mask = pool, owners, mask
        self.inputs = ordering
        self._payloads: dict[tuple[Any, ...], tuple[int, dict[str, Any]]] = {}

    def call(self, name: str, rows: npt.NDArray[np.int64], timeout: float,
             **fields: bool) -> None:
        """Request ``name`` with ``fields`` for ``rows`` (the host's writes for them done, the
        workers settled). Each payload is built once (``schemas.request`` takes a
        microsecond, a few percent of a reset)."""
        key = (name, *fields.items())
        built = self._payloads.get(key)
        if built is None:
            built = self._payloads[key] = (getattr(Command, name),
                                           schemas.request(name, **fields))
        command, payload = built
        mask = self.mask
        mask.fill(0)
        mask[rows] = 1
        members = [m for m in self.owners if mask[m.rows.start:m.rows.stop].any()]
        if members:
            for call in self.inputs:
                call()
            self.pool.call(command, payload, timeout, members=members)
