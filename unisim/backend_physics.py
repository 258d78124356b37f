"""A backend's randomised physics (``physics_randomization.py``): the draws on the host
(``physics_draws.py``) and the PHYSICS requests that apply them.

A ``Backend`` that randomises holds one for its life, hands it the requests of each start
of its workers, and calls it with its lock held and its workers settled.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import StateError
from .physics_draws import PhysicsDraws
from .physics_randomization import PhysicsRandomization
from .pool import RowRequests

Rows = npt.NDArray[np.int64]


class PhysicsControl:
    def __init__(self, spec: PhysicsRandomization, views: dict[str, Any], num_envs: int
                 ) -> None:
        """Draw every env's parameters into the ``physics`` slot of ``views``."""
        self.draws = PhysicsDraws(spec, views, num_envs)
        self._everyone = np.arange(num_envs)
        self.draws.draw(self._everyone)
        self._requests: RowRequests | None = None

    def start(self, requests: RowRequests, timeout: float) -> None:
        """Apply every env's parameters to fresh workers, which ``requests`` reach (a start
        or a restart: the values drawn at the first)."""
        self._requests = requests
        self._send(self._everyone, timeout, parameters=True)

    def randomize(self, rows: Rows, timeout: float) -> None:
        self.draws.draw(rows)
        self._send(rows, timeout, parameters=True)

    def push(self, rows: Rows, velocity: Any, timeout: float) -> None:
        self.draws.draw_push(rows, velocity)
        self._send(rows, timeout, push=True)

    def push_if_due(self, timeout: float) -> None:
        """After every step: push every env when the spec's interval has elapsed."""
        if self.draws.push_due():
            self.push(self._everyone, None, timeout)

    def redraw(self, rows: Rows) -> bool:
        """Before ``rows`` are reset: draw them new parameters if the spec says so; whether
        it did (the RESET then has the workers apply them)."""
        if self.draws.spec.on_reset:
            self.draws.draw(rows)
        return self.draws.spec.on_reset

    def _send(self, rows: Rows, timeout: float, **fields: bool) -> None:
        if self._requests is None:
            raise StateError("PhysicsControl.start() comes first")
        self._requests.call("PHYSICS", rows, timeout, **fields)
