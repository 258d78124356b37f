"""unisim's benchmark suite: every figure of one run, side by side, with paired ratios.

    .venv/bin/python -m benchmarks.throughput.suite [--quick] [--json FILE] [--plot FILE]
                                                    [--name NAME]

Prints markdown tables: round-trip latency against the raw pipe floor, spawn-to-first-step,
env-steps/s of the bundled quadruped against in-process MuJoCo and gymnasium, gymnasium's
Ant against EnvPool's Ant-v4, pipe bytes per step, and the targets of issue 5 met or
missed. ``--quick`` runs everything small (for CI: it must run, its figures mean little).
``--name`` publishes the header and tables as the block ``figures:NAME`` of the docs, with
every figure in its result file (tools/figures/doc_figures.py) and the plot
docs/figures/NAME.png.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

import unisim
from benchmarks.latency.round_trips import (
    STEP_FRAME,
    BellFloor,
    PipeFloor,
    PipeStepFloor,
    StepFloor,
    cartpole,
    physics_step,
    pin_apart,
    trips,
)
from benchmarks.measure import bytes_per_step, interleaved, paired_ratio, percentile
from benchmarks.systems import (
    HOST_PYTHON,
    RemoteRunner,
    System,
    Unisim,
    envpool_python,
    python38,
)
from benchmarks.throughput.lineup import (
    ANT_ASYNC,
    ASYNC,
    ENVPOOL,
    GYM_ANT_ASYNC,
    HOST,
    INPROC,
    INPROC38,
    POOL38,
    SYNC,
    WORKER38,
    Factory,
    ant_systems,
    quadruped_systems,
)
from benchmarks.throughput.plot import plot_throughput
from benchmarks.throughput.targets import targets
from tools.figures.doc_figures import ROOT, invocation, publish, stamp


class Settings:
    """Sizes, repetitions and budgets of a full run, or of a ``--quick`` one (CI)."""

    def __init__(self, quick: bool) -> None:
        self.quick = quick
        self.reps = 2 if quick else 7
        self.budget = 0.05 if quick else 0.25
        self.trips = 200 if quick else 2000
        self.latency_reps = 2 if quick else 7
        self.spawns = 1 if quick else 3
        self.sizes = [16, 256] if quick else [16, 256, 1024, 4096]
        self.ant_sizes = [8] if quick else [8, 64]
        self.async_max = 16  # AsyncVectorEnv is one process per env: 2 cores, 24 GiB
        self.sync_max = 256  # SyncVectorEnv builds one MujocoEnv per env
        self.bytes_steps = 5 if quick else 10  # bytes per step do not vary: few suffice


_last_table = time.perf_counter()
REPORT: list[str] = []  # the header and tables as printed, for ``--name``


def report(text: str) -> None:
    print(text, flush=True)
    REPORT.append(text)


def table(title: str, header: list[str], rows: list[list[str]]) -> None:
    """A markdown table; its title says how long the section took."""
    global _last_table
    now = time.perf_counter()
    lines = [f"#### {title} [{now - _last_table:.0f} s]", "",
             "| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    _last_table = now
    report("\n" + "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]))


# -- latency -------------------------------------------------------------------------------

def latency(cfg: Settings, interpreters: dict[str, str], results: dict[str, Any]) -> None:
    """Interleaved blocks of round trips: the pipe floor, unisim step (pipe, doorbell) and ping,
    and what a step cannot beat: the doorbell floor, the least Python step on each transport
    and the physics alone. The host runs on one core and every peer on another
    (``pin_apart``)."""
    calls: dict[str, tuple[str, Callable[[], object]]] = {}  # label -> (floor label, call)
    closers: list[Callable[[], None]] = []
    peers: list[int] = []
    try:
        for tag, python in interpreters.items():
            floor = PipeFloor(python)
            closers.append(floor.close)
            floor_label = f"raw pipe floor, {HOST} <-> {tag} ({STEP_FRAME} B frames)"
            calls[floor_label] = (floor_label, floor.trip)
            piped = cartpole(python, doorbell=False)
            closers.append(piped.close)
            calls[f"unisim step, pipe path, worker {tag}"] = (floor_label, piped.step)
            calls[f"unisim ping (pipe), worker {tag}"] = (floor_label, piped.ping)
            belled = cartpole(python, doorbell=True)
            closers.append(belled.close)
            calls[f"unisim step, doorbell, worker {tag}"] = (floor_label, belled.step)
            bell_floor = BellFloor(python)
            closers.append(bell_floor.close)
            calls[f"doorbell floor, {HOST} <-> {tag} (no work)"] = (floor_label, bell_floor.trip)
            least_bell, least_pipe = StepFloor(python), PipeStepFloor(python)
            closers += [least_bell.close, least_pipe.close]
            calls[f"least Python step, doorbell, {HOST} <-> {tag}"] = (floor_label,
                                                                      least_bell.trip)
            calls[f"least Python step, pipe (msgpack frames), {HOST} <-> {tag}"] = (
                floor_label, least_pipe.trip)
            peers += [floor.process.pid, piped.worker_pid, belled.worker_pid,
                      bell_floor.process.pid, least_bell.process.pid, least_pipe.process.pid]
        closers.append(pin_apart(peers))
        first_floor = next(iter(calls))
        calls[f"physics alone: mj_step in-process, {HOST}"] = (first_floor, physics_step())
        samples: dict[str, list[float]] = {label: [] for label in calls}
        p50s: dict[str, list[float]] = {label: [] for label in calls}
        for _ in range(cfg.latency_reps):
            for label, (_, call) in calls.items():
                block = trips(call, cfg.trips)
                samples[label] += block
                p50s[label].append(statistics.median(block))
    finally:
        for close in reversed(closers):
            close()
    rows, record = [], {}
    for label, (floor_label, _) in calls.items():
        ratio = paired_ratio(p50s[label], p50s[floor_label])
        p50, p99 = statistics.median(samples[label]), percentile(samples[label], 99)
        record[label] = {"p50_us": p50 * 1e6, "p99_us": p99 * 1e6, "ratio_to_floor": ratio}
        rows.append([label, f"{p50 * 1e6:.1f}", f"{p99 * 1e6:.1f}",
                     "1 (floor)" if label == floor_label else f"{ratio:.2f}x"])
    results["latency"] = record
    table(f"Round trips, cartpole x1 ({cfg.latency_reps} interleaved blocks of {cfg.trips}; "
          "ratio = median of per-block p50 ratios)", ["", "p50 µs", "p99 µs", "vs floor"], rows)


# -- spawn ----------------------------------------------------------------------------------

def spawn(cfg: Settings, interpreters: dict[str, str], results: dict[str, Any]) -> None:
    """Backend construction plus the first step, fresh worker each time."""
    cases = {"cartpole x1": ("cartpole", 1, None),
             "quadruped x1024 (default split)": ("quadruped", 1024, "stand")}
    rows, record = [], {}
    for tag, python in interpreters.items():
        row = [f"worker {tag}"]
        for case, (model, num_envs, key) in cases.items():
            times = []
            for _ in range(cfg.spawns):
                start = time.perf_counter()
                with unisim.Backend("mujoco", model=model, num_envs=num_envs, keyframe=key,
                                    python=python, progress=False) as sim:
                    sim.step()
                    times.append(time.perf_counter() - start)
            record[f"{tag} {case}"] = statistics.median(times)
            row.append(f"{statistics.median(times) * 1e3:.0f}")
        rows.append(row)
    results["spawn_s"] = record
    table(f"Spawn to first step, default options (median of {cfg.spawns}; ms)",
          ["", *(f"{case} ms" for case in cases)], rows)


# -- throughput -----------------------------------------------------------------------------



def throughput(title: str, cfg: Settings, sizes: list[int],
               factories: dict[str, Factory | str], references: dict[str, str],
               limits: dict[str, int], results: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Rates of every system at every size; a ``str`` factory is a reason it cannot run.

    Each row is paired with ``references[row]`` (or ``references["*"]``) for its ratio.
    """
    per_size: dict[int, dict[str, Any]] = {}
    for n in sizes:
        systems: dict[str, System] = {}
        skipped: dict[str, str] = {}
        built: dict[str, float] = {}
        try:
            for name, factory in factories.items():
                if isinstance(factory, str):
                    skipped[name] = factory
                elif n > limits.get(name, n):
                    skipped[name] = f"n/a (N > {limits[name]})"
                else:
                    try:
                        start = time.perf_counter()
                        systems[name] = factory(n)
                        built[name] = time.perf_counter() - start
                    except Exception as exc:  # shown in the table, never hidden
                        skipped[name] = f"failed: {type(exc).__name__}: {exc}"[:120]
            # bytes first, so every N is counted over the same request ids (msgpack writes
            # an id in 1, 2, 3 or 5 bytes as it grows)
            traffic = {name: bytes_per_step(s.worker_pids, s.step, cfg.bytes_steps)
                       for name, s in systems.items() if isinstance(s, Unisim)}
            start = time.perf_counter()
            rates = interleaved(systems, cfg.reps, cfg.budget)
            print(f"{title} N={n}: built in {sum(built.values()):.0f} s (slowest: "
                  f"{max(built, key=built.__getitem__)}, {max(built.values()):.1f} s), measured "
                  f"in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        finally:
            for system in systems.values():
                system.close()
        per_size[n] = {"rates": rates, "skipped": skipped, "bytes": traffic, "built": built}
    def reference(name: str) -> str:
        return references.get(name, references["*"])

    results[title] = {
        str(n): {"rates": d["rates"],
                 "median_rate": {k: statistics.median(v) for k, v in d["rates"].items()},
                 "ratio_to_reference": {k: paired_ratio(v, d["rates"][reference(k)])
                                        for k, v in d["rates"].items()
                                        if reference(k) in d["rates"]},
                 "skipped": d["skipped"],
                 "build_seconds": d["built"],
                 "bytes_per_step": {k: {"read": r, "written": w}
                                    for k, (r, w) in d["bytes"].items()}}
        for n, d in per_size.items()}
    rows = []
    for name in factories:
        row = [name]
        for n in sizes:
            d = per_size[n]
            if name in d["skipped"]:
                row.append(d["skipped"][name])
                continue
            rate = statistics.median(d["rates"][name])
            ref = reference(name)
            ratio = (f" ({paired_ratio(d['rates'][name], d['rates'][ref]):.2f}x)"
                     if ref in d["rates"] and name != ref else "")
            row.append(f"{rate:,.0f}{ratio}")
        rows.append(row)
    notes = "; ".join(f"{k if k != '*' else 'others'} to {v}" for k, v in references.items())
    table(f"{title}: env-steps/s, median of {cfg.reps} interleaved repetitions (median paired "
          f"ratio: {notes})", ["", *(f"N={n}" for n in sizes)], rows)
    return per_size


def pipe_bytes(per_size: dict[int, dict[str, Any]], sizes: list[int]) -> None:
    names = list(dict.fromkeys(k for n in sizes for k in per_size[n]["bytes"]))
    rows = []
    for name in names:
        row = [name]
        for n in sizes:
            got = per_size[n]["bytes"].get(name)
            row.append("" if got is None else f"{got[1]:.0f} / {got[0]:.0f}")
        rows.append(row)
    table("Pipe bytes per step, written / read by the worker(s) (/proc/<pid>/io wchar, rchar)",
          ["", *(f"N={n}" for n in sizes)], rows)


# -- main -----------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small and short, for CI")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--plot", type=Path, help="PNG of env-steps/s against N "
                        "(default: docs/figures/NAME.png with --name, else drawn and dropped)")
    parser.add_argument("--name", help="publish as figures:NAME in docs/benchmarks.md")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    cfg = Settings(args.quick)
    started = time.perf_counter()
    py38 = python38()
    interpreters = {HOST: HOST_PYTHON, **({"3.8": py38} if py38 else {})}
    command = invocation(argv)
    report(f"`{command}`: {os.cpu_count()} CPUs ({platform.machine()}), Python "
           f"{platform.python_version()}, MuJoCo {mujoco.__version__}, numpy {np.__version__}; "
           f"3.8 worker: {py38 or 'none'}; "
           f"{stamp()}")
    results: dict[str, Any] = {"quick": cfg.quick}
    latency(cfg, interpreters, results)
    spawn(cfg, interpreters, results)
    runners: list[RemoteRunner] = []
    try:
        loop38 = RemoteRunner(py38) if py38 else None
        runners += [loop38] if loop38 else []
        quad = throughput("quadruped", cfg, cfg.sizes, quadruped_systems(py38, loop38),
                          {"*": INPROC, WORKER38: INPROC38, POOL38: WORKER38},
                          {ASYNC: cfg.async_max, SYNC: cfg.sync_max}, results)
        pipe_bytes(quad, cfg.sizes)
        envpool_py = envpool_python()
        envpool: RemoteRunner | str = (
            RemoteRunner(envpool_py) if envpool_py
            else "n/a (no .venv-envpool: `make .venv-envpool/.installed`)")
        runners += [envpool] if isinstance(envpool, RemoteRunner) else []
        throughput("ant", cfg, cfg.ant_sizes, ant_systems(py38, envpool), {"*": ENVPOOL},
                   {ANT_ASYNC: cfg.async_max, GYM_ANT_ASYNC: cfg.async_max}, results)
    finally:
        for runner in runners:
            runner.close()
    table("Targets of issue 5 (this run)", ["target", "measured", "from"],
          targets(results, cfg.sizes, cfg.ant_sizes))
    plot_path = args.plot or (ROOT / "docs" / "figures" / f"{args.name}.png" if args.name
                              else None)
    if plot_path is None:  # drawn all the same, so that the plotting cannot rot, then dropped
        with tempfile.TemporaryDirectory(prefix="unisim-suite-") as folder:
            plot_throughput(results, Path(folder) / "throughput.png")
    else:
        plot_throughput(results, plot_path)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    report(f"\nWhole run {time.perf_counter() - started:.0f} s; ended {stamp()}.")
    if args.name:
        block = "\n".join(REPORT) + f"\n\n![env-steps/s against N](figures/{args.name}.png)\n"
        print("published in", publish(args.name, block, results, command))
    print(f"plot: {plot_path or 'drawn, not kept (--plot FILE keeps it)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
