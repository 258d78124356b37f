"""Round trips: the raw pipe floor between two interpreters, and unisim's step and ping.

The floor is ``echo.py`` on the worker's interpreter answering frames of the size of a
unisim STEP request through blocking ``os.write``/``os.read`` on a pipe pair: the same two
process wake-ups as a unisim round trip and nothing else.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from typing import Any

from systems import HERE

import unisim
import unisim.protocol as protocol

STEP_FRAME = protocol.framing.HEADER.size + len(
    protocol.pack(protocol.Kind.REQUEST, 1, protocol.Command.STEP, {}))


class PipeFloor:
    """A raw echo peer on ``python``; ``trip()`` is one write and one exact read."""

    def __init__(self, python: str, size: int = STEP_FRAME) -> None:
        self.process = subprocess.Popen([python, str(HERE / "py38" / "echo.py")],
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
    """The trivial model: one cartpole, whose physics step costs about a microsecond."""
    return unisim.Backend("mujoco", model="cartpole", num_envs=1, python=python,
                          progress=False, **options)
