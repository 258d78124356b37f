"""The worker as an OS process: spawn, stderr forwarding, kill, reap, exit reports."""

from __future__ import annotations

import collections
import logging
import os
import signal
import subprocess
import threading
import weakref
from importlib.util import find_spec
from pathlib import Path
from typing import IO, cast

import unisim_protocol as protocol


def worker_dir() -> Path:
    """The worker package's folder, found without importing it (the host never does)."""
    spec = find_spec("unisim_worker")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("unisim-worker is missing from this installation: "
                          "pip install unisim-worker (unisim-bridge depends on it)")
    return Path(next(iter(spec.submodule_search_locations)))


BOOTSTRAP = worker_dir() / "bootstrap.py"
PROTOCOL_DIR = Path(protocol.__file__).resolve().parent
_SCRUBBED_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONSAFEPATH")
STDERR_LINES = 60

log = logging.getLogger("unisim_worker")
_LIVE: weakref.WeakSet[WorkerProcess] = weakref.WeakSet()


def open_pipes() -> set[int]:
    """Descriptors of worker pipes still open in this process (for the leak guard).

    A descriptor counts only while it is still the pipe it was opened as: once closed, its
    number may be reused by anything (JAX opens pipes of its own), which is not our leak.
    """
    found = set()
    for process in list(_LIVE):
        for fd, inode in process.pipe_inodes.items():
            try:
                if os.fstat(fd).st_ino == inode:
                    found.add(fd)
            except OSError:
                continue
    return found


def worker_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The host's environment minus variables that would make the worker import host code."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
    env["PYTHONUNBUFFERED"] = "1"
    if extra:
        env.update(extra)
    return env


class WorkerProcess:
    """A worker interpreter in its own session, with its stderr forwarded to ``logging``."""

    def __init__(self, python: str, env: dict[str, str] | None = None,
                 pass_fds: tuple[int, ...] = ()) -> None:
        """``pass_fds``: descriptors the worker inherits (the work queue's read end)."""
        self.python = python
        self.popen = subprocess.Popen(
            [python, str(BOOTSTRAP), str(PROTOCOL_DIR)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=worker_environment(env), start_new_session=True, bufsize=0,
            pass_fds=pass_fds,
        )
        # stdin=PIPE (and so on) guarantees the three streams; the casts tell mypy.
        self.stdin_fd = cast(IO[bytes], self.popen.stdin).fileno()
        self.stdout_fd = cast(IO[bytes], self.popen.stdout).fileno()
        self._stderr_stream = cast(IO[bytes], self.popen.stderr)
        self.pipe_inodes = {fd: os.fstat(fd).st_ino for fd in (
            self.stdin_fd, self.stdout_fd, self._stderr_stream.fileno())}
        self._stderr = collections.deque[str](maxlen=STDERR_LINES)
        self._pump = threading.Thread(
            target=self._forward_stderr, name=f"unisim-stderr-{self.pid}", daemon=True)
        self._pump.start()
        _LIVE.add(self)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def _forward_stderr(self) -> None:
        for raw in iter(self._stderr_stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self._stderr.append(line)
            log.info("[worker %d] %s", self.pid, line)

    def stderr_tail(self, wait: float = 1.0) -> str:
        """The last lines the worker wrote to stderr (waits for them once it has exited)."""
        if self.popen.poll() is not None:
            self._pump.join(timeout=wait)
        return "\n".join(self._stderr)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL the worker (and anything it started in its session); never raises."""
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def wait(self, timeout: float) -> int | None:
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def reap(self, grace: float = 1.0) -> int | None:
        """Wait up to ``grace`` seconds for a voluntary exit, then kill; returns the status."""
        code = self.wait(grace)
        if code is None:
            self.kill()
            code = self.wait(5.0)
        return code

    def close_pipes(self) -> None:
        for stream in (self.popen.stdin, self.popen.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self._pump.join(timeout=1.0)
        if self.popen.stderr is not None:
            self.popen.stderr.close()
        self.pipe_inodes = {}  # closed: these numbers are free for anyone to reuse

    def describe_exit(self) -> str:
        code = self.popen.returncode
        if code is None:
            return f"worker (pid {self.pid}) is still running"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"worker (pid {self.pid}) was killed by {name}"
        return f"worker (pid {self.pid}) exited with status {code}"
