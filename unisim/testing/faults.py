"""Fault scripts for the mock engine, built on the host and carried in its INIT options."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from typing import Any

from unisim_protocol import COMMAND_NAMES

COMMANDS = frozenset(COMMAND_NAMES.values())


@dataclass(frozen=True)
class Fault:
    """Misbehave on the ``call``-th request of ``command`` (counted from 1 per worker).

    Build one with the class methods; pass a list of them to ``mock_backend(faults=...)``.
    """

    command: str
    call: int
    action: str
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.command not in COMMANDS:
            raise ValueError(f"unknown command {self.command!r}; one of {sorted(COMMANDS)}")
        if self.call < 1:
            raise ValueError(f"call counts from 1, got {self.call}")

    def to_wire(self) -> dict[str, Any]:
        return {"command": self.command, "call": self.call, "action": self.action, **self.params}

    @classmethod
    def kill(cls, command: str, call: int = 1, sig: int = signal.SIGKILL) -> Fault:
        """The worker kills itself with signal ``sig``."""
        return cls(command, call, "kill", {"signal": int(sig)})

    @classmethod
    def exit(cls, command: str, call: int = 1, code: int = 3) -> Fault:
        """The worker exits at once with status ``code`` (no cleanup, like ``os._exit``)."""
        return cls(command, call, "exit", {"code": code})

    @classmethod
    def segfault(cls, command: str, call: int = 1) -> Fault:
        """The worker dereferences NULL."""
        return cls(command, call, "segfault")

    @classmethod
    def hang(cls, command: str, call: int = 1, seconds: float | None = None) -> Fault:
        """The worker stops answering (for ``seconds``, or forever)."""
        return cls(command, call, "hang", {} if seconds is None else {"seconds": seconds})

    @classmethod
    def slow(cls, command: str, call: int = 1, seconds: float = 1.0,
             progress: bool = False, interval: float = 0.1) -> Fault:
        """The reply comes ``seconds`` late, with PROGRESS frames every ``interval`` if asked."""
        return cls(command, call, "slow",
                   {"seconds": seconds, "progress": progress, "interval": interval})

    @classmethod
    def error(cls, command: str, call: int = 1, message: str = "scripted failure",
              faulted: bool = False) -> Fault:
        """The engine raises; ``faulted`` says its state can no longer be trusted."""
        return cls(command, call, "raise", {"message": message, "faulted": faulted})

    @classmethod
    def garbage(cls, command: str, call: int = 1, data: bytes = b"not a frame\n") -> Fault:
        """``data`` is written on the protocol stream itself (a corrupt worker)."""
        return cls(command, call, "garbage", {"data": data})

    @classmethod
    def print_fd1(cls, command: str, call: int = 1,
                  data: bytes = b"hello from C on fd 1\n") -> Fault:
        """``data`` is written to fd 1 by libc, as a C library's banner would be."""
        return cls(command, call, "print", {"data": data})
