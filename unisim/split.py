"""How a backend's envs are split: how many workers, and how many threads each.

Decided once, in ``choose``, from what the worker's engine can do under its options (its
answer to DESCRIBE says whether it steps on threads of its own, e.g. MuJoCo >= 4's
``mujoco.batch``, or on one thread, e.g. MuJoCo 3.x on Python 3.8), the machine's cores,
and the user's ``workers=`` and ``threads=``. Measured on a 16-core machine
(docs/benchmarks.md, "The split"): an engine with threads of its own is fastest as one
process with every core; a single-threaded one as one process per core.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .pool import split_rows

# Below this many envs per worker, one more process costs more (a wake-up and a straggler
# to wait for on every step) than it brings (benchmarks/split/rows_per_worker.py).
MIN_ROWS_PER_WORKER = 8

Capabilities = dict[str, Any]


@dataclass(frozen=True)
class Split:
    """``workers`` processes with ``threads`` stepping threads each, and why.

    ``shared``: every worker maps every env and a STEP's rows are claimed in chunks from
    one queue (``unisim_protocol.doorbell``), so no worker waits on a slower core's fixed share.
    """

    workers: int
    threads: int
    reason: str
    shared: bool = False

    def spare_core(self) -> bool:
        """Whether a core is left for the host while the workers' threads step."""
        return self.workers * self.threads < cores()


def worker_rows(shared: bool, num_envs: int, count: int) -> list[range]:
    """The rows each of ``count`` workers holds: a contiguous share, or every row when the
    workers share rows (``Split.shared``)."""
    return [range(num_envs)] * count if shared else split_rows(num_envs, count)


def cores() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def choose(caps: Mapping[str, Any], num_envs: int, *, workers: int | None = None,
           threads: int | None = None, one_device: bool = False,
           cpus: int | None = None, shareable: bool = True) -> Split:
    """The split for ``num_envs`` envs of an engine with capabilities ``caps``.

    ``one_device``: the slots live on one GPU (or a GPU was named), so one worker.
    ``workers`` and ``threads`` override the choice; ``cpus`` defaults to ``cores()``.
    Several workers of an engine that can (``caps["shares_rows"]``) share their rows
    unless ``shareable`` is False (per-env physics parameters live in each worker).
    """
    check_asked(num_envs, workers, threads)
    chosen = _choose(caps, num_envs, workers, threads, one_device, cpus or cores())
    if chosen.workers > 1 and shareable and caps.get("shares_rows"):
        return Split(chosen.workers, chosen.threads,
                     f"{chosen.reason}; rows claimed in chunks from a shared queue", True)
    return chosen


def check_asked(num_envs: int, workers: int | None, threads: int | None) -> None:
    """Refuse a ``workers=`` or ``threads=`` no split can honour (before anything starts)."""
    for name, value in (("workers", workers), ("threads", threads)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise ValueError(f"{name} must be a positive int or None, got {value!r}")
    if workers is not None and workers > num_envs:
        raise ValueError(f"workers must lie in [1, num_envs={num_envs}], got {workers}")


def _choose(caps: Mapping[str, Any], num_envs: int, workers: int | None,
            threads: int | None, one_device: bool, cpus: int) -> Split:
    threaded = bool(caps.get("threaded"))
    if workers is not None:
        return Split(workers, threads or (max(1, cpus // workers) if threaded else 1),
                     f"workers={workers} asked for")
    if one_device or caps.get("per_device"):
        return Split(1, threads or cpus, "one worker per GPU: the state lives on the device")
    if threaded:
        count = 1 if threads is None else max(1, min(num_envs, cpus // threads))
        return Split(count, threads or cpus,
                     f"{caps.get('engine', 'the engine')} steps on threads of its own: "
                     f"{'one worker with every core' if threads is None else 'cores / threads'}")
    count = max(1, min(cpus, num_envs // MIN_ROWS_PER_WORKER))
    return Split(count, threads or 1,
                 f"{caps.get('engine', 'the engine')} steps on one thread: one worker per "
                 f"core, at least {MIN_ROWS_PER_WORKER} envs each")
