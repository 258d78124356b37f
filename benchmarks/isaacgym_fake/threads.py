"""The IsaacGym SDK fake stepping its envs on one thread and on every core, side by side.

    .venv/bin/python -m benchmarks.isaacgym_fake.threads [--sizes 1024 256] [--publish]
    python3 -m benchmarks.isaacgym_fake.threads --python python3 --json RUN.json  # GPU machine
    python -m benchmarks.isaacgym_fake.threads --saved RUN.json --name NAME --publish

Each scene and size is built once in a process of the fake's interpreter
(``py38/fake_threads.py``: the CI quadruped on a plane, or on legged_gym-style rough
terrain, stepped as legged_gym steps it: 4 simulates per env step), which times its env
steps with ``UNISIM_FAKE_THREADS`` at 1 and at this machine's core count in turn, round
after round. The figures are env-steps/s (num_envs x steps / seconds), medians over rounds,
and their ratio. ``--json`` keeps them (written after each run, so a run cut short keeps
what it measured); ``--saved`` publishes such a file from a machine without this
checkout's docs (the GPU machine) instead of measuring. Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.measure import add_saved_options, publish_figures
from benchmarks.systems import PY38
from tools.figures.doc_figures import invocation, stamp
from unisim.interpreter import find_python38
from unisim.split import cores
from unisim.testing import isaacgym_fake_python

SCENE = PY38 / "fake_threads.py"


def run_scene(python: str, scene: str, num_envs: int, threads: list[int],
              args: argparse.Namespace) -> dict[str, Any]:
    """One scene at one size: env-steps/s per thread count, median over rounds."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # as a worker's
    env.setdefault("MUJOCO_GL", "egl")
    command = [python, str(SCENE), scene, str(num_envs), str(args.steps), str(args.rounds),
               *map(str, threads)]
    result = subprocess.run(command, cwd=SCENE.parent, capture_output=True, text=True,
                            env=env, timeout=args.timeout, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{scene} at {num_envs} envs failed: {result.stderr[-2000:]}")
    rounds = [json.loads(line) for line in result.stdout.splitlines()[1:] if line.strip()]
    rates = {str(t): statistics.median(num_envs * args.steps / r[str(t)] for r in rounds)
             for t in threads}
    return {"scene": scene, "num_envs": num_envs, "threads": threads, "rates": rates,
            "rounds": rounds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 256])
    parser.add_argument("--scenes", nargs="+", default=["rough", "plane"],
                        choices=["rough", "plane"])
    parser.add_argument("--threads", type=int, default=None,
                        help="the many-thread count (default: the cores this process may "
                             "run on)")
    parser.add_argument("--steps", type=int, default=5, help="env steps per thread count "
                        "and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per scene")
    parser.add_argument("--python", default=None, help="the fake's base Python (default: "
                        "a Python 3.8 from UNISIM_PY38 or .venv38)")
    add_saved_options(parser, "isaacgym-fake-threads")
    publish_figures(parser.parse_args(), measure)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    base = shutil.which(args.python) if args.python else find_python38()[0] or sys.executable
    if base is None:
        raise SystemExit(f"--python {args.python}: no such interpreter")
    python = isaacgym_fake_python(base)
    many = args.threads or cores()
    threads = sorted({1, many})
    header = [f"{stamp()}; the SDK fake on {base}, {cores()} cores; the CI quadruped, "
              f"env-steps/s (4 simulates of 5 ms each), median of {args.rounds} rounds x "
              f"{args.steps} steps",
              f"{'scene':>6} {'N':>6} {'1 thread':>10} {f'{many} threads':>11} {'ratio':>6}"]
    data: dict[str, Any] = {"python": base, "cores": cores(), "command": invocation(),
                            "results": [], "lines": header}
    for scene in args.scenes:
        for num_envs in args.sizes:
            r = run_scene(python, scene, num_envs, threads, args)
            one, all_ = r["rates"]["1"], r["rates"][str(many)]
            data["results"].append(r)
            data["lines"].append(f"{scene:>6} {num_envs:>6} {one:>10.0f} {all_:>11.0f} "
                                 f"{all_ / one:>6.2f}")
            print(data["lines"][-1], flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(data, indent=2) + "\n")
    return data


if __name__ == "__main__":
    main()
