"""Interleaved repetitions, paired ratios, percentiles, pipe byte counts and CPU time.

These machines are noisy (in-process MuJoCo swings up to 2x over minutes), so every
comparison is made inside one repetition, A and B back to back, and what is reported is
the median over repetitions of the per-repetition ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.systems import System
from tools.figures.doc_figures import invocation, publish


def interleaved(systems: dict[str, System], reps: int, budget: float,
                ) -> dict[str, list[float]]:
    """env-steps/s of every system, once per repetition; the order rotates each time."""
    rates: dict[str, list[float]] = {name: [] for name in systems}
    names = list(systems)
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            rates[name].append(systems[name].measure(budget))
    return rates


def paired_ratio(a: Sequence[float], b: Sequence[float]) -> float:
    """Median over repetitions of a[i] / b[i]."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def io_counters(pids: Sequence[int]) -> tuple[int, int]:
    """(rchar, wchar) summed over ``pids``, from /proc/<pid>/io."""
    read = written = 0
    for pid in pids:
        fields = dict(line.split(": ") for line in
                      Path(f"/proc/{pid}/io").read_text().splitlines())
        read += int(fields["rchar"])
        written += int(fields["wchar"])
    return read, written


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds process ``pid`` has used, from /proc/<pid>/stat (in clock
    ticks: 10 ms on most kernels)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bytes_per_step(pids: Sequence[int], step: Callable[[], Any], steps: int) -> tuple[float, float]:
    """(read, written) bytes per step by the worker processes ``pids``."""
    step()
    read0, written0 = io_counters(pids)
    for _ in range(steps):
        step()
    read1, written1 = io_counters(pids)
    return (read1 - read0) / steps, (written1 - written0) / steps


def add_saved_options(parser: argparse.ArgumentParser, name: str) -> None:
    """``--json``, ``--saved``, ``--name`` and ``--publish``: a run made on another machine
    (the GPU one) saves its figures, and this one publishes them (``publish_figures``)."""
    parser.add_argument("--json", default=None, help="also write the measured figures to this "
                        "file (a long benchmark writes them as it goes too)")
    parser.add_argument("--saved", default=None,
                        help="take the figures from this --json file instead of measuring")
    parser.add_argument("--name", default=name,
                        help="the figure block --publish writes (docs/benchmarks.md)")
    parser.add_argument("--publish", action="store_true",
                        help="write the figures into docs/benchmarks.md (figures:NAME)")


def publish_figures(args: argparse.Namespace,
                    measure: Callable[[argparse.Namespace], dict[str, Any]]) -> None:
    """The figures ``measure(args)`` gives, or those ``--saved``: printed, measured ones
    written to ``--json``, and with ``--publish`` written into their block, with the command
    that measured them."""
    data = json.loads(Path(args.saved).read_text()) if args.saved else measure(args)
    if args.json and not args.saved:
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n")
    print("\n".join(data["lines"]))
    if args.publish:
        block = ["```", f"$ {data['command']}", *data["lines"], "```"]
        publish(args.name, "\n".join(block) + "\n", data,
                f"{data['command']}; then {invocation()}" if args.saved else data["command"])
