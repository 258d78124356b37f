"""How few envs a worker of a single-threaded engine should get: the default split at small N.

    python -m benchmarks.split.rows_per_worker [--sizes 32,48,64,128,256,512] [--reps 5]
                                               [--budget 0.3] [--json FILE] [--name NAME]

A single-threaded engine (here MuJoCo 3.2 on the Python 3.8 worker, ``UNISIM_PY38``) gets
one worker per core with at least ``split.MIN_ROWS_PER_WORKER`` envs each. At every N this
times the worker counts that 64, 32, 16 and 8 envs per worker give on this machine (``N //
envs``, at most one per core), side by side in interleaved repetitions, on the cheapest
model (the cartpole, 1 substep) and on a robot (the quadruped, 4 substeps), with random
controls written every step. Ratios are medians of per-repetition ratios to the fewest
workers; ``*`` marks the default's choice.
``--name`` publishes the table as the block ``figures:NAME`` of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from benchmarks.measure import interleaved, paired_ratio
from benchmarks.systems import System, Unisim, python38
from tools.figures.doc_figures import invocation, publish, stamp
from unisim import split

MODELS = (("cartpole", 1, None), ("quadruped", 4, "stand"))
ENVS_EACH = (64, 32, 16, 8)


def run(python: str, sizes: list[int], reps: int, budget: float) -> list[dict[str, Any]]:
    cpus, rows = split.cores(), []
    for model, substeps, keyframe in MODELS:
        for num_envs in sizes:
            counts = sorted({max(1, min(cpus, num_envs // each)) for each in ENVS_EACH})
            if len(counts) < 2:
                continue
            default = split.choose({}, num_envs).workers
            pools: dict[str, System] = {}
            try:
                for count in counts:
                    pools[str(count)] = Unisim(model, num_envs, keyframe, substeps,
                                               python=python, workers=count)
                rates = interleaved(pools, reps, budget)
            finally:
                for pool in pools.values():
                    pool.close()
            base = rates[str(counts[0])]
            for count in counts:
                got = rates[str(count)]
                rows.append({"model": f"{model} x{substeps}", "num_envs": num_envs,
                             "workers": count, "default": count == default,
                             "rate": statistics.median(got),
                             "ratio": paired_ratio(got, base)})
            print(f"{model} x{substeps} N={num_envs}: " + "  ".join(
                f"{r['workers']} {r['rate']:,.0f}/s {r['ratio']:.2f}x"
                for r in rows[-len(counts):]), flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| model | N | workers (envs each) | env-steps/s | vs fewest workers |",
             "| --- | ---: | --- | ---: | ---: |"]
    for r in rows:
        mark = " *" if r["default"] else ""
        lines.append(f"| {r['model']} | {r['num_envs']} | {r['workers']} "
                     f"({r['num_envs'] // r['workers']}){mark} | {r['rate']:,.0f} | "
                     f"{r['ratio']:.2f}x |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="32,48,64,128,256,512")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.3, help="seconds per measurement")
    parser.add_argument("--json", type=Path, help="write the rows to this file")
    parser.add_argument("--name", help="publish as figures:NAME in docs/benchmarks.md")
    args = parser.parse_args()
    python = python38()
    if python is None:
        parser.error("needs a Python 3.8 worker interpreter: set UNISIM_PY38")
    rows = run(python, [int(n) for n in args.sizes.split(",")], args.reps, args.budget)
    header = (f"{split.cores()} cores; {stamp()}; `{invocation()}`; MuJoCo 3.2 on the 3.8 "
              f"worker, {args.reps} interleaved repetitions; * the default split")
    block = f"{header}\n\n{table(rows)}"
    print("\n" + block)
    if args.json:
        args.json.write_text(json.dumps({"header": header, "rows": rows}, indent=1))
    if args.name:
        publish(args.name, block, {"header": header, "rows": rows}, invocation())
    return 0


if __name__ == "__main__":
    sys.exit(main())
