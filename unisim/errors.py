"""Typed errors of the host backend.

Every failure a user can meet is one of these; ``UnisimError`` catches them all.
After ``WorkerCrashed``, ``WorkerTimeout`` or ``ProtocolError`` the backend is dead and
every later call raises ``BackendDead`` naming the original cause.
"""

from __future__ import annotations


class UnisimError(Exception):
    """Base class of unisim's errors."""


class SetupError(UnisimError):
    """The worker could not be started or configured; ``hint`` says how to fix it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(f"{message}\n  hint: {hint}" if hint else message)
        self.hint = hint


class RemoteError(UnisimError):
    """The worker raised while serving a request.

    ``faulted`` tells whether the engine's state may be inconsistent; when it is
    False the backend stays usable.
    """

    def __init__(self, command: str, exc_type: str, message: str, traceback: str,
                 faulted: bool, stderr_tail: str = "") -> None:
        state = "engine state is no longer trustworthy" if faulted else "backend still usable"
        tail = (f"\n--- worker stderr (last lines) ---\n{stderr_tail.rstrip()}"
                if stderr_tail else "")
        super().__init__(
            f"{command} failed in the worker with {exc_type}: {message} ({state})\n"
            f"--- remote traceback ---\n{traceback.rstrip()}{tail}"
        )
        self.command = command
        self.exc_type = exc_type
        self.remote_message = message
        self.remote_traceback = traceback
        self.faulted = faulted
        self.stderr_tail = stderr_tail


class WorkerDied(UnisimError):
    """The worker is gone; base of crashes and timeouts."""

    def __init__(self, message: str, stderr_tail: str) -> None:
        tail = (f"\n--- worker stderr (last lines) ---\n{stderr_tail.rstrip()}"
                if stderr_tail else "")
        super().__init__(message + tail)
        self.stderr_tail = stderr_tail


class WorkerCrashed(WorkerDied):
    """The worker exited or was killed; ``returncode`` is negative for a signal."""

    def __init__(self, message: str, returncode: int | None, stderr_tail: str) -> None:
        super().__init__(message, stderr_tail)
        self.returncode = returncode


class WorkerTimeout(WorkerDied):
    """The worker did not answer before the deadline and was killed."""

    def __init__(self, message: str, timeout: float, stderr_tail: str) -> None:
        super().__init__(message, stderr_tail)
        self.timeout = timeout


class ProtocolError(UnisimError):
    """The byte stream from the worker was not valid protocol; the worker was killed."""


class BackendDead(UnisimError):
    """The backend was closed, or died earlier; the message names why."""


class RenderWorkerDied(UnisimError):
    """A render worker died or stopped answering; the pool needs ``restart()``."""

    def __init__(self, message: str, who: str, worker: int, device: int | None) -> None:
        super().__init__(message)
        self.who = who
        self.worker = worker
        self.device = device


class LeakError(AssertionError):
    """Code left a worker process, a unisim segment or a pipe/segment descriptor behind
    (``unisim.testing.leak_guard``). An ``AssertionError``, so test runners report a
    failed test, not a crash."""


class StateError(UnisimError):
    """A call made in a state that does not allow it (a bug in the caller, not the worker):
    e.g. waiting for a reply with no request in flight."""
