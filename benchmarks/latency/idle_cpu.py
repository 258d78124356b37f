"""The CPU the host and the worker use while each waits for the other, with a core to spare
and without.

    .venv/bin/python -m benchmarks.latency.idle_cpu [--rounds 3] [--quick]

A doorbell wait spins briefly, then sleeps (``protocol.doorbell.Forecast``). Where the
workers' threads leave a core free (``threads=1`` here), a waiter that has seen when an
answer comes dozes until shortly before it and spins for it; where they fill every core
(``threads=split.cores()``), it sleeps until it is rung and leaves the cores to the engine.
On the mock engine (2 envs, one worker), at both settings:

* host: the CPU time of the host's thread (``time.thread_time``) over 10 steps that the
  worker makes last 20 ms each (``Fault.slow``), after 2 that show the host the wait;
* worker: the worker process's user + system time (``/proc/<pid>/stat``, in clock ticks of
  10 ms: coarse) over 50 host turns of 20 ms (``time.sleep``, the host's policy) each
  followed by a step, after 5 that show the worker the turn.

The settings alternate, round after round; each figure is the median over rounds and the
ratio the median of the rounds' paired ratios. Prints figures; asserts nothing (the tests
check the mechanism: tests/test_doorbell.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from benchmarks.measure import cpu_seconds, paired_ratio
from unisim import split
from unisim.testing import Fault, mock_backend

SLOW = 0.02  # seconds: a long step, and the host's turn between steps
STEPS = 10  # slow steps timed on the host
TURNS = 50  # host turns timed on the worker


def cpu_while_waiting(threads: int) -> tuple[float, float]:
    """(the host's CPU seconds over ``STEPS`` slow steps, the worker's over ``TURNS`` host
    turns) with the worker's engine on ``threads`` threads."""
    faults = [Fault.slow("STEP", call=k, seconds=SLOW) for k in range(1, STEPS + 3)]
    with mock_backend(2, faults=faults, workers=1, threads=threads, progress=False) as sim:
        if sim.split is None or sim.split.threads != threads:
            raise RuntimeError(f"asked for {threads} threads, got the split {sim.split}")
        sim.step()
        sim.step()  # the host's forecast has seen the wait
        start = time.thread_time()
        for _ in range(STEPS):
            sim.step()
        host = time.thread_time() - start
        for _ in range(5):  # the last slow steps, then the worker's forecast sees the turn
            time.sleep(SLOW)
            sim.step()
        before = cpu_seconds(sim.worker_pid)
        for _ in range(TURNS):
            time.sleep(SLOW)
            sim.step()
        return host, cpu_seconds(sim.worker_pid) - before


def ratio(spare: list[float], filled: list[float]) -> str:
    if min(filled) > 0:
        return f"{paired_ratio(spare, filled):.1f}x"
    return "n/a (every core: under one clock tick)" if max(filled) == 0 else \
        "n/a (a round under one clock tick)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round (CI)")
    args = parser.parse_args()
    cores = split.cores()
    if cores < 2:
        print(f"a core to spare needs two cores; this machine gives unisim {cores}")
        return 0
    rounds = 1 if args.quick else args.rounds
    settings = {"spare": 1, "filled": cores}
    figures: dict[str, dict[str, list[float]]] = {
        name: {"host": [], "worker": []} for name in settings}
    for turn in range(rounds):
        order = list(settings.items())
        for name, threads in order[::-1] if turn % 2 else order:
            host, worker = cpu_while_waiting(threads)
            figures[name]["host"].append(host)
            figures[name]["worker"].append(worker)
    spare, filled = figures["spare"], figures["filled"]
    width = 46
    print(f"CPU while waiting: mock engine, 2 envs, 1 worker, {cores} cores; "
          f"median of {rounds} alternating round(s), ms")
    print(f"{'':<{width}} {'threads=1 (a core to spare)':>28} "
          f"{f'threads={cores} (every core)':>26}  spare / every core")
    rows = {"host": f"host, {STEPS} steps of {SLOW * 1e3:.0f} ms (thread_time)",
            "worker": f"worker, {TURNS} host turns of {SLOW * 1e3:.0f} ms (/proc)"}
    for side, label in rows.items():
        print(f"{label:<{width}} {statistics.median(spare[side]) * 1e3:>28.1f} "
              f"{statistics.median(filled[side]) * 1e3:>26.1f}  "
              f"{ratio(spare[side], filled[side])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
