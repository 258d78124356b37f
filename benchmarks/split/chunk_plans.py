"""The 3.8 pool's chunk plan: chunks that shrink as a step goes on (unisim's plan,
``unisim_protocol.doorbell.chunk_bounds``) against equal chunks (the plan before), beside the
worker's stepper in as many independent processes (the most a pool of that size could get).

    python -m benchmarks.split.chunk_plans [--quick] [--sizes 1024,4096,16384] [--workers 2,8]
                                           [--model PATH] [--reps 7] [--budget 0.8]
                                           [--json FILE] [--name NAME]
    python -m benchmarks.split.chunk_plans --publish FILE.json --name NAME

Workers that share rows finish a step when the last chunk is done, so the chunk plan
decides how long the others wait; equal chunks small enough to keep that wait short cost
many claims. At every N and worker count, in interleaved repetitions, from the model at
rest (``sweep.settled``): the pool with each plan, and the independent processes. Needs a
Python 3.8 interpreter (``UNISIM_PY38``). ``--name`` publishes ``figures:NAME`` in
docs/benchmarks.md (tools/figures/doc_figures.py); ``--publish`` does that from a saved
``--json`` run made on another machine.
"""

from __future__ import annotations

import argparse
import json
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

from benchmarks.measure import interleaved, paired_ratio
from benchmarks.split.sweep import Sim, add_run_options, independent_steppers, run_defaults, settled
from benchmarks.systems import System, python38
from tools.figures.doc_figures import invocation, publish
from unisim import split
from unisim_protocol import doorbell

EQUAL_PER_WORKER = 16  # the plan before chunks shrank
PLANS = {"equal": f"{EQUAL_PER_WORKER} equal chunks per worker",
         "shrinking": "shrinking chunks (unisim)", "independent": "independent processes"}


def equal_chunks(num_envs: int, workers: int) -> list[int]:
    rows = max(1, num_envs // (workers * EQUAL_PER_WORKER))
    return [*range(0, num_envs, rows), num_envs]


class EqualChunks(Sim):
    """The 3.8 pool with the plan before: the host's plan replaced while it starts."""

    def __init__(self, model: str, num_envs: int, **options: Any) -> None:
        plan = doorbell.chunk_bounds
        doorbell.chunk_bounds = equal_chunks
        try:
            super().__init__(model, num_envs, **options)
        finally:
            doorbell.chunk_bounds = plan


def systems(model: str, num_envs: int, workers: int, py38: str) -> dict[str, System]:
    factories: dict[str, Callable[[], System]] = {
        "equal": lambda: EqualChunks(model, num_envs, python=py38, workers=workers),
        "shrinking": lambda: Sim(model, num_envs, python=py38, workers=workers),
        "independent": lambda: independent_steppers(py38, model, num_envs, workers),
    }
    built: dict[str, System] = {}
    try:
        for plan, factory in factories.items():
            built[plan] = factory()
    except Exception:
        for system in built.values():
            system.close()
        raise
    return built


def measure(model: str, args: argparse.Namespace, py38: str) -> dict[str, Any]:
    """env-steps/s of every plan, per ``"N,K"``."""
    out: dict[str, Any] = {}
    for num_envs in args.sizes:
        for workers in args.workers:
            built = systems(model, num_envs, workers, py38)
            try:
                out[f"{num_envs},{workers}"] = interleaved(built, args.reps, args.budget)
            finally:
                for system in built.values():
                    system.close()
            print(f"N={num_envs}, workers={workers}: done", file=sys.stderr, flush=True)
    return out


def block(data: dict[str, Any]) -> str:
    machine, settings = data["machine"], data["settings"]
    lines = [f"`{data['command']}`: {machine['cpus']} CPUs ({machine['machine']}), Python "
             f"{machine['python']}, 3.8 worker: MuJoCo 3.2 on {machine['py38']}; "
             f"{machine['model']}, 1 substep, zero ctrl, from the model at rest; "
             f"{machine['date']}; load average {', '.join(f'{x:.1f}' for x in machine['load'])}.",
             "",
             f"ms per step, median of {settings['reps']} interleaved repetitions of "
             f"{settings['budget']} s; (ratio): median paired ratio of env-steps/s to the "
             "independent processes.",
             "",
             "| N, workers | " + " | ".join(PLANS.values())
             + " | shrinking / equal (env-steps/s) |",
             "|---|" + "---:|" * (len(PLANS) + 1)]
    for key, rates in data["rates"].items():
        num_envs, workers = (int(x) for x in key.split(","))
        cells = []
        for plan in PLANS:
            ms = num_envs / statistics.median(rates[plan]) * 1e3
            ratio = ("" if plan == "independent" else
                     f" ({paired_ratio(rates[plan], rates['independent']):.2f}x)")
            cells.append(f"{ms:,.2f}{ratio}")
        gain = paired_ratio(rates["shrinking"], rates["equal"])
        lines.append(f"| {num_envs:,}, {workers} | " + " | ".join(cells) + f" | {gain:.2f}x |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(parser)
    parser.add_argument("--sizes", help="comma-separated N (default 1024,4096; --quick: 128)")
    parser.add_argument("--workers", help="comma-separated worker counts (default 2,8 where "
                        "the machine has the cores; --quick: 2)")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--name", help="publish as figures:NAME in docs/benchmarks.md")
    parser.add_argument("--publish", type=Path, help="publish a saved --json run")
    args = parser.parse_args(argv)
    if args.publish:
        saved: dict[str, Any] = json.loads(args.publish.read_text())
        if "rates" not in saved:
            parser.error(f"{args.publish} is not a run saved by chunk_plans.py --json")
        return emit(saved, args.name)
    py38 = python38()
    if py38 is None:
        parser.error("no Python 3.8 interpreter: set UNISIM_PY38 (or make .venv38/.installed)")
    cpus = split.cores()
    args.sizes = [int(n) for n in (args.sizes or ("128" if args.quick else "1024,4096"))
                  .split(",")]
    args.workers = [int(k) for k in (args.workers or ("2" if args.quick else ",".join(
        str(k) for k in (2, 8) if k <= cpus))).split(",")]
    model = run_defaults(args)
    data: dict[str, Any] = {
        "command": invocation(argv),
        "machine": {"cpus": cpus, "machine": platform.machine(),
                    "python": platform.python_version(), "mujoco": mujoco.__version__,
                    "py38": py38, "model": Path(model).name, "load": list(os.getloadavg()),
                    "date": time.strftime("%Y-%m-%d %H:%M %Z")},
        "settings": {"sizes": args.sizes, "workers": args.workers, "reps": args.reps,
                     "budget": args.budget},
    }
    with tempfile.TemporaryDirectory(prefix="unisim-chunks-") as folder:
        data["rates"] = measure(settled(model, Path(folder)), args, py38)
    if args.json:
        args.json.write_text(json.dumps(data, indent=1))
    return emit(data, args.name)


def emit(data: dict[str, Any], name: str | None) -> int:
    text = block(data)
    print(text)
    if name:
        publish(name, text, data, data["command"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
