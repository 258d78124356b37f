"""The IsaacGym SDK fake on one thread and on every core, against an earlier revision's fake.

    .venv/bin/python -m benchmarks.isaacgym_fake.threads --baseline-rev fa97e1a [--sizes 1024]
    python3 -m benchmarks.isaacgym_fake.threads --python python3 \
        --baseline baseline-fake/unisim/isaacgym_fake --json RUN.json  # GPU machine
    python -m benchmarks.isaacgym_fake.threads --saved RUN.json --name NAME --publish

Each scene and size (``py38/fake_threads.py``: the CI quadruped on a plane, or on
legged_gym-style rough terrain, stepped as legged_gym steps it: 4 simulates per env step)
is built in a process of today's fake's interpreter, which times its env steps with
``UNISIM_FAKE_THREADS`` at 1 and at this machine's core count in turn. With a baseline, it
is also built in a process of the baseline's: the base interpreter with ``PYTHONPATH`` the
baseline's folder (the scene checks where ``isaacgym`` came from); that fake has no threads,
so it is timed at one count. The baseline is a folder holding an earlier revision's package
``isaacgym/`` (``--baseline DIR``: the GPU machine has no git history, and ``make
gpu-stage`` stages fa97e1a's in baseline-fake/unisim/isaacgym_fake), or the one
``--baseline-rev REV`` extracts from this checkout's history into a temporary folder.

The two processes run one after the other, never at once, their order alternating,
``--rounds`` times; each times ``--process-rounds`` rounds of ``--steps`` env steps. The
figures are env-steps/s (num_envs x steps / seconds): per process the median over its
rounds, then the median over the alternations; each ratio (today's many threads to the
baseline and to one thread) is the median over the alternations of that alternation's
ratio. ``--json`` keeps them (written after each scene, so a run cut short keeps what it
measured); ``--saved`` publishes such a file from a machine without this checkout's docs
(the GPU machine) instead of measuring. Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.measure import add_saved_options, paired_ratio, publish_figures
from benchmarks.systems import PY38
from tools.figures.doc_figures import ROOT, invocation, stamp
from unisim.interpreter import find_python38
from unisim.split import cores
from unisim.testing import isaacgym_fake_python
from unisim.testing.isaacgym_fake_env import FAKE_ROOT

SCENE = PY38 / "fake_threads.py"
PACKAGE = "isaacgym_fake/isaacgym/__init__.py"  # where the fake has lived at every revision


@dataclass(frozen=True)
class Fake:
    """One fake to time: the interpreter that imports it, with its environment, the folder
    its ``isaacgym`` must come from, and the thread count each of its columns is timed at."""

    python: str
    env: dict[str, str]
    root: Path
    columns: dict[str, int]

    def rates(self, scene: str, num_envs: int, args: argparse.Namespace) -> dict[str, float]:
        """env-steps/s per column in one process, median over its rounds."""
        threads = sorted(set(self.columns.values()))
        command = [self.python, str(SCENE), scene, str(num_envs), str(args.steps),
                   str(args.process_rounds), *map(str, threads)]
        result = subprocess.run(command, cwd=SCENE.parent, capture_output=True, text=True,
                                env=self.env, timeout=args.timeout, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"{scene} at {num_envs} envs on {self.root} failed: "
                               f"{result.stderr[-2000:]}")
        origin, *rounds = [json.loads(line) for line in result.stdout.splitlines()
                              if line.strip()]
        if Path(origin["isaacgym"]).resolve() != (self.root / "isaacgym").resolve():
            raise RuntimeError(f"{self.python} imported isaacgym from {origin['isaacgym']}, "
                               f"not from {self.root}")
        return {name: statistics.median(num_envs * args.steps / r[str(t)] for r in rounds)
                for name, t in self.columns.items()}


def extract(rev: str, into: Path) -> Path:
    """The folder holding the fake's package ``isaacgym/`` at ``rev``, taken from this
    checkout's git history (``git archive``) into ``into``."""
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.splitlines()
    found = [name[:-len("/isaacgym/__init__.py")] for name in names if name.endswith(PACKAGE)]
    if len(found) != 1:
        raise SystemExit(f"--baseline-rev {rev}: {len(found)} paths end {PACKAGE}, not one")
    archive = subprocess.run(["git", "archive", rev, found[0]], cwd=ROOT, check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / found[0]


def run_scene(fakes: list[Fake], scene: str, num_envs: int, many: int,
              args: argparse.Namespace) -> dict[str, Any]:
    """One scene at one size, each fake in its own process, alternating."""
    rounds: list[dict[str, float]] = []
    for k in range(args.rounds):
        rates: dict[str, float] = {}
        for fake in fakes if k % 2 == 0 else fakes[::-1]:
            rates.update(fake.rates(scene, num_envs, args))
        rounds.append(rates)
    ratios = {name: paired_ratio([r[str(many)] for r in rounds], [r[name] for r in rounds])
              for name in ("baseline", "1") if name in rounds[0]}
    return {"scene": scene, "num_envs": num_envs,
            "rates": {name: statistics.median(r[name] for r in rounds) for name in rounds[0]},
            "ratios": ratios, "rounds": rounds}


def cell(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


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
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternations of the baseline's and today's processes")
    parser.add_argument("--process-rounds", type=int, default=2,
                        help="rounds each process times")
    parser.add_argument("--timeout", type=float, default=1200.0,
                        help="seconds per process")
    parser.add_argument("--python", default=None, help="the fake's base Python (default: "
                        "a Python 3.8 from UNISIM_PY38 or .venv38)")
    baseline = parser.add_mutually_exclusive_group()
    baseline.add_argument("--baseline", default=None, metavar="DIR",
                          help="a folder holding an earlier revision's package isaacgym/")
    baseline.add_argument("--baseline-rev", default=None, metavar="REV",
                          help="the fake of git revision REV of this checkout")
    parser.add_argument("--baseline-name", default=None,
                        help="the baseline's name in the table (default: REV, or 'baseline')")
    add_saved_options(parser, "isaacgym-fake-threads")
    publish_figures(parser.parse_args(), measure)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="unisim-baseline-fake-") as tmp:
        baseline = (Path(args.baseline) if args.baseline else
                    extract(args.baseline_rev, Path(tmp)) if args.baseline_rev else None)
        return compare(args, baseline)


def compare(args: argparse.Namespace, baseline: Path | None) -> dict[str, Any]:
    base = shutil.which(args.python) if args.python else find_python38()[0] or sys.executable
    if base is None:
        raise SystemExit(f"--python {args.python}: no such interpreter")
    many = args.threads or cores()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # as a worker's
    env.setdefault("MUJOCO_GL", "egl")
    fakes = [Fake(isaacgym_fake_python(base), env, FAKE_ROOT, {"1": 1, str(many): many})]
    label = args.baseline_name or args.baseline_rev or "baseline"
    if baseline is not None:
        if not (baseline / "isaacgym" / "__init__.py").is_file():
            raise SystemExit(f"{baseline} holds no package isaacgym/")
        fakes.insert(0, Fake(base, {**env, "PYTHONPATH": str(baseline.resolve())}, baseline,
                             {"baseline": 1}))
    against = (f"against {label}'s fake" if args.baseline_rev or args.baseline_name else
               f"against the fake in {baseline}" if baseline else "no baseline")
    header = [f"{stamp()}; the SDK fake on {base}, {cores()} cores, {against}; the CI "
              f"quadruped, env-steps/s (4 simulates of 5 ms each), medians of {args.rounds} "
              f"alternations x {args.process_rounds} rounds x {args.steps} steps; the ratios are "
              f"{many} threads' figure over each",
              f"{'scene':>6} {'N':>6} {label:>10} {'1 thread':>10} {f'{many} threads':>11} "
              f"{f'vs {label}':>11} {'vs 1 thread':>11}"]
    data: dict[str, Any] = {"python": base, "cores": cores(), "baseline": against,
                            "command": invocation(), "results": [], "lines": header}
    for scene in args.scenes:
        for num_envs in args.sizes:
            r = run_scene(fakes, scene, num_envs, many, args)
            rates, ratios = r["rates"], r["ratios"]
            data["results"].append(r)
            data["lines"].append(
                f"{scene:>6} {num_envs:>6} {cell(rates.get('baseline'), '.0f'):>10} "
                f"{rates['1']:>10.0f} {rates[str(many)]:>11.0f} "
                f"{cell(ratios.get('baseline'), '.2f'):>11} {ratios['1']:>11.2f}")
            print(data["lines"][-1], flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(data, indent=2) + "\n")
    return data


if __name__ == "__main__":
    main()
