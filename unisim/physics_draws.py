"""Drawing physics parameters on the host, per env, independent of the worker count.

Values are drawn **on the host** and written into shared-memory slots that the workers
apply: the worker stays a plain applier, the parameters in effect are the host's own
arrays, and the draws cannot depend on how envs are split between workers. The generator
is counter-based: the uniforms of env ``i`` at its ``k``-th draw are a hash of
``(seed, stream, i, k, column)`` (SplitMix64's finaliser, as numpy's own ``SeedSequence``
mixes its entropy), so a reset of any subset of envs costs a few vectorised integer
operations, with no generator object per env.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .physics_randomization import (
    Distribution,
    LogUniform,
    PhysicsRandomization,
    Uniform,
)

PARAMETERS, PUSHES = 1, 2  # streams: the same env and count give unrelated numbers per stream
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
Array = npt.NDArray[np.float64]


def _mix(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64's finaliser: a bijection of uint64 with full avalanche."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    out: npt.NDArray[np.uint64] = x ^ (x >> np.uint64(31))
    return out


def uniforms(seed: int, stream: int, envs: npt.NDArray[np.int64],
             draws: npt.NDArray[np.int64], columns: int) -> Array:
    """``(len(envs), columns)`` uniforms in [0, 1): a function of (seed, stream, env,
    draw, column) only."""
    with np.errstate(over="ignore"):
        key = _mix(np.array([seed * 4 + stream], dtype=np.uint64) * _GOLDEN)
        h = _mix(key ^ _mix(envs.astype(np.uint64) + _GOLDEN))
        h = _mix(h ^ _mix(draws.astype(np.uint64) * _GOLDEN + np.uint64(1)))
        cols = (np.arange(1, columns + 1, dtype=np.uint64) * _GOLDEN)[None, :]
        bits = _mix(h[:, None] ^ cols)
    out: Array = (bits >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return out


def sample(distribution: Distribution, u: Array, v: Array) -> Array:
    """Values of ``distribution`` from two independent uniform arrays ``u`` and ``v``."""
    out: Array
    if isinstance(distribution, Uniform):
        out = distribution.low + (distribution.high - distribution.low) * u
    elif isinstance(distribution, LogUniform):
        low, high = np.log(distribution.low), np.log(distribution.high)
        out = np.exp(low + (high - low) * u)
    else:  # Gaussian, by Box-Muller; 1 - u lies in (0, 1]
        normal = np.sqrt(-2.0 * np.log1p(-u)) * np.cos(2.0 * np.pi * v)
        out = np.clip(distribution.mean + distribution.std * normal, distribution.low,
                      distribution.high)
    return out


class PhysicsDraws:
    """The host side of a backend's randomisation: draw counters and the two slots.

    ``physics`` (num_envs, columns) holds each env's drawn values (scale factors, added
    amounts or set values, per parameter), ``push`` (num_envs, 6) the velocities of the
    next push. The worker applies them to the rows flagged in ``reset_mask``.
    """

    def __init__(self, spec: PhysicsRandomization, views: dict[str, Any],
                 num_envs: int) -> None:
        self.spec = spec
        self.values: Array = views["physics"] if spec.parameters else np.zeros((num_envs, 0))
        self.push_values: Array | None = views.get("push")
        self.draws = np.zeros(num_envs, dtype=np.int64)
        self.pushes = np.zeros(num_envs, dtype=np.int64)
        self.steps = 0

    def draw(self, rows: npt.NDArray[np.int64]) -> None:
        """Draw new parameters for ``rows`` into the ``physics`` slot."""
        spec = self.spec
        if not spec.parameters or not len(rows):
            return
        u = uniforms(spec.seed, PARAMETERS, rows, self.draws[rows], 2 * spec.columns)
        for parameter, column in zip(spec.parameters, spec.column_of(), strict=True):
            for k in range(column, column + parameter.width):
                self.values[rows, k] = sample(parameter.distribution, u[:, 2 * k],
                                              u[:, 2 * k + 1])
        self.draws[rows] += 1

    def draw_push(self, rows: npt.NDArray[np.int64], velocity: Any = None) -> None:
        """Write the push velocities of ``rows``: drawn from the spec, or ``velocity``
        (broadcast to ``(len(rows), len(axes))``)."""
        push, target = self.spec.push, self.push_values
        if push is None or target is None:
            raise ValueError("this backend has no Push in its randomization; add "
                             "PhysicsRandomization(push=Push(...))")
        axes = [("x", "y", "z", "roll", "pitch", "yaw").index(a) for a in push.axes]
        target[rows] = 0.0
        if velocity is None:
            u = uniforms(self.spec.seed, PUSHES, rows, self.pushes[rows], 2 * len(axes))
            for k, axis in enumerate(axes):
                target[rows, axis] = sample(push.velocity, u[:, 2 * k], u[:, 2 * k + 1])
            self.pushes[rows] += 1
            return
        given = np.asarray(velocity, dtype=np.float64)
        try:
            given = np.broadcast_to(given, (len(rows), len(axes)))
        except ValueError:
            raise ValueError(f"push velocity must broadcast to ({len(rows)}, {len(axes)}) "
                             f"(envs, axes {push.axes}), got shape {given.shape}") from None
        if not np.isfinite(given).all():
            raise ValueError("push velocity contains NaN or infinite values")
        for k, axis in enumerate(axes):
            target[rows, axis] = given[:, k]

    def push_due(self) -> bool:
        """Count a step; True when the spec's push interval has elapsed."""
        push = self.spec.push
        if push is None or push.interval is None:
            return False
        self.steps += 1
        return self.steps % push.interval == 0

    def parameters(self) -> dict[str, Array]:
        """Each parameter's values in effect, by label (copies)."""
        return by_label(self.spec, self.values)


def by_label(spec: PhysicsRandomization, values: Array) -> dict[str, Array]:
    """A ``physics`` slot's columns per parameter: (num_envs,), or (num_envs, 3) for gravity."""
    out = {}
    for parameter, column in zip(spec.parameters, spec.column_of(), strict=True):
        block = values[:, column:column + parameter.width]
        out[parameter.label] = block.copy() if parameter.width > 1 else block[:, 0].copy()
    return out
