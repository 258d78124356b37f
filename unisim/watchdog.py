"""Deadlines for blocking reads, without a ``select`` before every read.

A poll before each read costs tens of microseconds per round trip on small machines.
Instead the host reads blocking and a watchdog thread fires ``on_expire`` (which kills
the worker, so the read returns EOF) once an armed deadline passes, unless ``answered()``
says the worker has written something the host has not read yet (it is busy with another
worker of a pool): then the deadline moves on by the armed span. Arming is an attribute
store; the thread sleeps without waking while nothing is armed for a while.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

_TICK = 0.02  # seconds between checks while requests are in flight
_IDLE_AFTER = 1.0  # seconds without a deadline before the thread sleeps until notified


class Watchdog:
    def __init__(self, on_expire: Callable[[], None], name: str,
                 answered: Callable[[], bool]) -> None:
        self._on_expire = on_expire
        self._answered = answered
        self._deadline: float | None = None
        self._span = 0.0
        self._fired = False
        self._closed = False
        self._sleeping = False
        self._wake = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def fired(self) -> bool:
        return self._fired

    def arm(self, seconds: float) -> None:
        self._span = seconds
        self._deadline = time.monotonic() + seconds
        if self._sleeping:
            with self._wake:
                self._wake.notify()

    def disarm(self) -> None:
        self._deadline = None

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)

    def _run(self) -> None:
        idle_since = time.monotonic()
        with self._wake:
            while not self._closed:
                deadline = self._deadline
                now = time.monotonic()
                if deadline is None:
                    if now - idle_since > _IDLE_AFTER:
                        self._sleeping = True
                        if self._deadline is None:  # re-check: arm() may have just run
                            self._wake.wait()
                        self._sleeping = False
                        idle_since = time.monotonic()
                    else:
                        self._wake.wait(_TICK)
                    continue
                idle_since = now
                if now >= deadline and self._answered():
                    self._deadline = now + self._span  # it answered; the host reads it later
                    continue
                if now >= deadline:
                    self._fired = True
                    self._deadline = None
                    self._on_expire()
                    continue
                self._wake.wait(min(_TICK, deadline - now))
