"""The life of a group of workers and the arena they share, for ``Backend`` and
``RenderPool`` alike: spawn → handshake → INIT → arena → ATTACH → unlink, restart, close.

``Workers`` is the one owner of both (and of a backend's STEP work queue). It is kept
apart from its user so that a finalizer can release it: workers come and go (``stop``,
then ``spawn``: a restart), the arena stays until ``close``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from unisim_protocol import VERSION, Command, doorbell, schemas

from .errors import ProtocolError, RemoteError, SetupError, UnisimError, WorkerDied
from .pool import Member, WorkerPool
from .progress import ProgressBar
from .slots import Arena

SHUTDOWN_TIMEOUT = 5.0  # seconds a worker gets to exit after SHUTDOWN before it is killed
Payload = Callable[[Member], dict[str, Any]]


class Workers:
    def __init__(self, python: str, engine: str, queue: bool = False) -> None:
        """``queue``: give every worker the read end of a STEP work queue (a backend's,
        used when its split shares rows: ``unisim_protocol.doorbell``)."""
        self.python = python
        self.engine = engine
        self.pool: WorkerPool | None = None
        self.arena: Arena | None = None
        self.queue = doorbell.WorkQueue() if queue else None

    def spawn(self, rows: Sequence[range], envs: Sequence[dict[str, str]],
              timeout: float) -> dict[str, Any]:
        """Start one worker per row range and read their HELLOs; the first one's."""
        inherited = (self.queue.fd,) if self.queue else ()
        self.pool = WorkerPool(self.python, rows, envs, pass_fds=inherited)
        return handshake(self.pool, self.python, self.engine, timeout)

    def grow(self, rows: Sequence[range], envs: Sequence[dict[str, str]],
             timeout: float) -> None:
        """Give the running workers the first ranges of ``rows`` (the split may change what
        each holds) and start one more worker, with ``envs``, per range left."""
        pool = self.live()
        running = len(pool.members)
        for member, own in zip(pool.members, rows[:running], strict=True):
            member.rows = own
        if len(rows) > running:
            handshake(pool, self.python, self.engine, timeout,
                      pool.extend(rows[running:], envs))

    def describe(self, options: dict[str, Any], num_envs: int,
                 timeout: float) -> dict[str, Any]:
        """The engine's capabilities under ``options`` (``unisim.split``), as its first
        worker works them out: the engine reads its own options."""
        member = self.live().members[0]
        payload = schemas.request("DESCRIBE", engine=self.engine, options=options,
                                  num_envs=num_envs)
        reply = member.channel.request(Command.DESCRIBE, payload, timeout)
        capabilities: dict[str, Any] = reply["capabilities"]
        return capabilities

    def init(self, spec: Payload, timeout: float, progress: bool) -> list[dict[str, Any]]:
        """INIT every worker (with a progress bar); an engine whose SDK the interpreter
        lacks is a ``SetupError`` naming what to install."""
        bar = ProgressBar(f"{self.engine} init", enabled=progress)
        try:
            return self.live().call(Command.INIT, lambda m: schemas.request("INIT", **spec(m)),
                                    timeout, bar.update)
        except RemoteError as exc:
            if exc.exc_type != "ModuleNotFoundError":
                raise self._with_stderr(exc) from None
            found = re.search(r"No module named '([^'.]+)", exc.remote_message)
            module = found.group(1) if found else "the missing module"
            raise SetupError(
                f"the {self.engine} engine cannot start on {self.python}: "
                f"{exc.remote_message}",
                hint=f"install {module} into that interpreter (for a PyPI package: "
                     f"{self.python} -m pip install {module}), or pass python= one that "
                     "has it") from exc
        finally:
            bar.close()

    def _with_stderr(self, exc: RemoteError) -> RemoteError:
        """A failed INIT with what the workers wrote on stderr: an SDK reports a refused
        asset there and returns None, so the traceback alone names only the consequence.
        The workers are stopped (the backend closes after a failed start), so that every
        line they wrote has been read."""
        pool = self.live()
        pool.kill()
        for member in pool.members:
            member.process.wait(5.0)
        tail = "\n".join(m.process.stderr_tail() for m in pool.members).strip()
        return RemoteError(exc.command, exc.exc_type, exc.remote_message, exc.remote_traceback,
                           exc.faulted, tail)

    def attach(self, payload: Payload, timeout: float) -> None:
        """ATTACH every worker to the arena, then unlink its name: from now on only the
        mappings (and this process's descriptor) keep it."""
        if self.arena is None:
            raise SetupError("ATTACH before the arena exists", hint="a bug in unisim")
        try:
            self.live().call(Command.ATTACH, payload, timeout)
        finally:
            self.arena.unlink()

    def queue_fields(self, num_envs: int) -> Payload:
        """INIT's ``queue`` for each worker once they share ``num_envs`` rows: every worker
        builds every env, the first one (the owner) publishes them."""
        if self.queue is None:
            raise SetupError("no work queue: Workers(queue=True)", hint="a bug in unisim")
        queue, first = self.queue, self.live().members[0]
        bounds = doorbell.chunk_bounds(num_envs, len(self.live().members))
        queue.plan(len(bounds) - 1)
        return lambda m: {"queue": {"fd": queue.fd, "bounds": bounds, "owner": m is first}}

    def live(self) -> WorkerPool:
        """The running pool."""
        if self.pool is None:
            raise SetupError("no workers: spawn() first", hint="a bug in unisim")
        return self.pool

    def close(self) -> None:
        """Stop the workers and free the arena. Never raises."""
        try:
            self.stop()
        finally:
            if self.arena is not None:
                self.arena.close()
                self.arena = None
            if self.queue is not None:
                self.queue.close()
                self.queue = None

    def stop(self) -> None:
        """Stop the workers politely (SHUTDOWN to all, then every reply), then firmly."""
        if self.pool is None:
            return
        pool, self.pool = self.pool, None
        members = pool.members
        try:
            told = []
            for member in members:
                if member.channel.dead is None and member.process.alive():
                    try:
                        pool.send(member, Command.SHUTDOWN, schemas.request("SHUTDOWN"),
                                  SHUTDOWN_TIMEOUT)
                        told.append(member)
                    except (UnisimError, OSError):
                        pass
            for member in told:
                try:
                    member.channel.wait()
                except (UnisimError, OSError):
                    pass
            for member in members:
                member.process.close_pipes()
                member.process.reap(grace=SHUTDOWN_TIMEOUT)
        finally:
            for member in members:
                member.channel.close()


def handshake(pool: WorkerPool, python: str, engine: str, timeout: float,
              members: Sequence[Member] | None = None) -> dict[str, Any]:
    """Read the HELLO of ``members`` (default: all); check they speak our protocol and host
    ``engine``."""
    members = pool.members if members is None else members
    try:
        hello = pool.hello(timeout, members)[0]
    except (WorkerDied, ProtocolError) as exc:
        said = ""
        if isinstance(exc, ProtocolError):  # it printed something: show that, and stderr
            process = members[0].process
            process.reap(grace=0.0)  # killed already; reaped, its stderr can be read to EOF
            tail = process.stderr_tail()
            said = f"\n--- its stderr ---\n{tail}" if tail else ""
        raise SetupError(
            f"the worker on {python} did not speak the unisim protocol: {exc}{said}",
            hint=f"check that {python} is Python >= 3.8 with numpy and msgpack "
                 f"installed ({python} -m pip install numpy msgpack) and the engine's "
                 f"SDK") from exc
    if hello.get("protocol") != VERSION:
        raise SetupError(
            f"worker speaks protocol version {hello.get('protocol')}, host speaks "
            f"{VERSION}", hint="install the same unisim version on both sides")
    try:
        hello = dict(schemas.read("HELLO", hello))
    except schemas.SchemaError as exc:
        raise SetupError(f"the worker on {python} sent a malformed HELLO: {exc}",
                         hint="install the same unisim version on both sides") from exc
    if engine not in hello["engines"]:
        raise SetupError(f"worker has no engine {engine!r}",
                         hint=f"choose one of {hello['engines']}")
    return hello
