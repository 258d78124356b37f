"""Request/reply over one worker's pipes, with deadlines and typed failures.

One request is in flight per channel; ``send`` and ``wait`` are separate so that a pool
can send to every worker before it waits for any. Callers serialise threads (the
backend holds a lock). Every transport failure leaves the channel dead with a recorded
cause and the worker killed, so no late reply can be read as the answer to a later
request.
"""

from __future__ import annotations

import itertools
import select
from collections.abc import Callable
from typing import Any

import unisim_protocol as protocol
from unisim_protocol import Kind, schemas

from .errors import (
    BackendDead,
    ProtocolError,
    RemoteError,
    StateError,
    WorkerCrashed,
    WorkerTimeout,
)
from .process import WorkerProcess
from .watchdog import Watchdog

Progress = Callable[[dict[str, Any]], None]
Message = tuple[int, int, int | None, dict[str, Any]]  # kind, request id, command, payload


class Channel:
    def __init__(self, process: WorkerProcess) -> None:
        self.process = process
        self._reader = protocol.FrameReader(process.stdout_fd)
        self._writer = protocol.FrameWriter(process.stdin_fd)
        watched = select.poll()  # the watchdog thread's own: a poll object is not shareable
        watched.register(process.stdout_fd, select.POLLIN)
        self._watchdog = Watchdog(process.kill, f"unisim-watchdog-{process.pid}",
                                  answered=lambda: bool(watched.poll(0)))
        # Request ids: requests rung outside the pipe (the doorbell's STEP) take theirs with
        # next(ids) too, so a frame for either is matched to the right request.
        self.ids = itertools.count(1)
        # (request id, command, timeout) of the request sent whose reply is not read yet
        self.pending: tuple[int, int, float] | None = None
        self.dead: BaseException | None = None

    def hello(self, timeout: float) -> dict[str, Any]:
        """Wait for the worker's unsolicited HELLO frame."""
        self._check_alive()
        kind, _, _, payload = self._read(timeout, "the handshake")
        if kind != Kind.HELLO:
            raise self._fail(ProtocolError(
                f"expected HELLO from the worker, got {protocol.describe(kind, None)}"))
        return payload

    def request(self, command: int, payload: dict[str, Any], timeout: float,
                on_progress: Progress | None = None) -> dict[str, Any]:
        """Send one request and return its reply payload (raises a typed error otherwise)."""
        self.send(command, payload, timeout)
        return self.wait(on_progress)

    def send(self, command: int, payload: dict[str, Any], timeout: float) -> int:
        """Send a request and return its id; its deadline starts now. ``wait`` collects
        the reply."""
        self.settle()
        request_id = next(self.ids)
        self._send(protocol.pack(Kind.REQUEST, request_id, command, payload), timeout)
        self.pending = (request_id, command, timeout)
        return request_id

    def settle(self) -> None:
        """Collect the reply of a request whose wait was interrupted (e.g. by Ctrl-C)."""
        if self.dead is not None or self.pending is not None:
            self._check_alive()
            self.wait()

    def collect(self, request_id: int, command: int, timeout: float) -> dict[str, Any]:
        """Read the pipe frames answering ``request_id``, a request sent outside the pipe."""
        return self._await(request_id, command, timeout, None)

    def has_input(self, spin: float = 0.0) -> bool:
        """Whether the worker has written something not read yet, polling for up to
        ``spin`` seconds (``FrameReader.ready``)."""
        ready: bool = self._reader.ready(spin)
        return ready

    def wait(self, on_progress: Progress | None = None) -> dict[str, Any]:
        """The reply payload of the request in flight."""
        if self.pending is None:
            raise StateError("wait() with no request in flight: send() first")
        request_id, command, timeout = self.pending
        return self._await(request_id, command, timeout, on_progress)

    def _send(self, frame: bytes, timeout: float) -> None:
        self._watchdog.arm(timeout)
        try:
            self._writer.write(frame)
        except BrokenPipeError:
            self._watchdog.disarm()
            raise self.died("while the host was sending a request", timeout) from None
        except BaseException as exc:  # a partial frame leaves the stream unusable
            self._watchdog.disarm()
            raise self._fail(ProtocolError(f"sending a request was interrupted: {exc!r}")) from exc

    def _await(self, request_id: int, command: int, timeout: float,
               on_progress: Progress | None) -> dict[str, Any]:
        name = protocol.COMMAND_NAMES.get(command) or str(command)
        while True:
            kind, reply_id, _, payload = self._read(timeout, name)
            if reply_id != request_id:
                raise self._fail(ProtocolError(
                    f"reply id {reply_id} does not match request id {request_id} ({name})"))
            if kind == Kind.PROGRESS:  # the next read re-arms the deadline
                if on_progress is not None:
                    on_progress(payload)
                continue
            self.pending = None
            if kind == Kind.REPLY:
                return payload
            if kind == Kind.ERROR:
                try:
                    fields = schemas.read("ERROR", payload)
                except schemas.SchemaError as exc:
                    raise self._fail(ProtocolError(
                        f"malformed ERROR frame from the worker during {name}: {exc}")) from None
                error = RemoteError(name, fields["type"], fields["message"], fields["traceback"],
                                    fields["faulted"])
                if error.faulted:
                    raise self._fail(error)
                raise error
            raise self._fail(ProtocolError(
                f"unexpected {protocol.describe(kind, None)} frame while awaiting {name}"))

    def _read(self, timeout: float, waiting_for: str) -> Message:
        self._watchdog.arm(timeout)
        try:
            message: Message = protocol.unpack(self._reader.read())
            return message
        except (protocol.StreamClosed, OSError):
            raise self.died(f"during {waiting_for}", timeout) from None
        except (protocol.FrameError, protocol.MessageError, protocol.WireTypeError) as exc:
            if self._watchdog.fired:
                raise self.died(f"during {waiting_for}", timeout) from None
            raise self._fail(ProtocolError(
                f"corrupt frame from the worker during {waiting_for}: {exc}")) from None
        except BaseException as exc:
            # A KeyboardInterrupt can land between os.read returning and the bytes being
            # stored, so the stream position is unknowable: never guess, give up on it.
            self._fail(ProtocolError(
                f"{type(exc).__name__} while reading the worker's answer to {waiting_for}; "
                "the stream position is lost, so the worker was stopped (restart() brings "
                "the backend back)"))
            raise
        finally:
            self._watchdog.disarm()

    def died(self, when: str, timeout: float, timed_out: bool = False) -> BaseException:
        """The typed error for a worker found dead (or overdue) ``when``; kills it."""
        process = self.process
        if timed_out or self._watchdog.fired:
            process.reap(grace=0.0)
            error: BaseException = WorkerTimeout(
                f"worker (pid {process.pid}) did not answer within {timeout:g} s {when}; "
                "it was killed", timeout, process.stderr_tail())
        else:
            process.reap(grace=1.0)
            error = WorkerCrashed(f"{process.describe_exit()} {when}",
                                  process.popen.returncode, process.stderr_tail())
        return self._fail(error)

    def _fail(self, error: BaseException) -> BaseException:
        """Record ``error`` as the channel's cause of death and kill the worker."""
        self.dead = error
        self.process.kill()
        return error

    def _check_alive(self) -> None:
        if self.dead is not None:
            raise BackendDead(f"the worker is dead: {self.dead}") from self.dead

    def close(self) -> None:
        self._watchdog.close()
