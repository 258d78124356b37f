"""What the task bridge costs: the same IsaacGym task stepped in-process and through it.

    .venv/bin/python -m benchmarks.throughput.task_bridge [--sizes 64 1024] [--publish]
    python3 -m benchmarks.throughput.task_bridge --python python3 --sim-device cuda:0  # GPU
    python -m benchmarks.throughput.task_bridge --saved RUN.json --name task-bridge-gpu --publish
    .venv/bin/python -m benchmarks.throughput.task_bridge --control --name task-bridge-control

In-process: the task on the worker's interpreter (Python 3.8 and the SDK fake, or the SDK),
built by the worker's own code and stepped in a loop (``py38/task_bridge_inprocess.py``).
Through the bridge: ``BridgedTask.step`` on this interpreter, the task in a worker on that
interpreter, its outputs in shared memory (``--sim-device cuda:N``: the GPU pipeline, the
outputs in CUDA memory) and copied out for the learner, as ``step`` returns them. Both
stay alive and are measured in turn, round after round; the ratio is the median over rounds
of bridged / in-process per-step medians. Each turn starts with ``--settle`` steps left out
of the medians (kept in ``--json``): the side that just woke finds its threads parked and
the machine's caches and GPU holding the other side's work, which a training loop, stepping
one side only, never meets. The task is the CI ant (examples/isaacgym_tasks).
``--control`` puts a second in-process task in the bridge's place, measured the same way:
how far apart two identical processes land, the floor under the bridge's ratio.
``--pairs K`` starts K pairs of processes and measures each pair's sides in turn, every
round: a process's speed varies by a few percent from one start to the next (``--control``),
on the GPU machine by as much as the bridge costs there; the ratio is then the median over
every pair's rounds, and each pair's is printed beside it.
This process runs torch on one thread, as ``unisim.training`` does: a trainer's thread pool
spinning after each op would take cores from the worker.
Prints the figures; asserts nothing. ``--json`` keeps the figures (written after each N, so
a run cut short keeps what it measured); ``--saved`` publishes such a file from a machine
without this checkout's docs (the GPU machine) instead of measuring.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from benchmarks.measure import add_saved_options, publish_figures
from benchmarks.systems import PY38
from tools.figures.doc_figures import ROOT, invocation, stamp
from unisim.interpreter import find_python38
from unisim.task_bridge import BridgedTask
from unisim.testing import isaacgym_fake_python

INPROCESS = PY38 / "task_bridge_inprocess.py"
EXAMPLES = ROOT / "examples"


class InProcess:
    """The task in a process of its own interpreter, stepped there on request."""

    def __init__(self, python: str, options: dict[str, Any], num_envs: int) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="unisim-task-bench-")
        path = Path(self.folder.name) / "options.json"
        path.write_text(json.dumps(options))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # as a worker's
        self.process = subprocess.Popen(
            [python, str(INPROCESS), "serve", str(path), str(num_envs)], cwd=INPROCESS.parent,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        if "ready" not in self._answer():
            raise RuntimeError("the in-process task did not start")

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the in-process task exited ({self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def measure(self, steps: int) -> list[float]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"steps": steps}) + "\n")
        self.process.stdin.flush()
        seconds: list[float] = self._answer()["seconds"]
        return seconds

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)
        self.folder.cleanup()


def measure_bridge(task: BridgedTask, steps: int, generator: torch.Generator) -> list[float]:
    seconds = []
    cuda = task.device.type == "cuda"
    for _ in range(steps):
        actions = (torch.rand(task.num_envs, task.num_actions, generator=generator) * 2.0
                   - 1.0).to(task.device)
        started = time.perf_counter()
        task.step(actions)
        if cuda:
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - started)
    return seconds


def compare(python: str, num_envs: int, args: argparse.Namespace) -> dict[str, Any]:
    """Per-step medians of each side, round by round and pair by pair, and their ratios."""
    cfg = json.loads((EXAMPLES / "isaacgym_tasks" / "cfg" / "ant.json").read_text())
    plane = "cuda" if args.sim_device.startswith("cuda") else "shm"
    rounds: list[dict[str, Any]] = []
    generator = torch.Generator().manual_seed(0)
    with contextlib.ExitStack() as stack:
        turns: list[dict[str, Callable[[int], list[float]]]] = []  # each pair's two sides
        task: BridgedTask | None = None
        for _ in range(args.pairs):
            if task is None or not args.control:  # a control's pairs share one idle bridge
                task = stack.enter_context(BridgedTask(
                    "isaacgym_tasks.ant:Ant", num_envs, style="vec_task", cfg=cfg,
                    paths=[EXAMPLES], python=python, sim_device=args.sim_device,
                    data_plane=plane, timeout=600.0))
            inprocess = stack.enter_context(contextlib.closing(
                InProcess(python, task.options, num_envs)))
            if args.control:  # a second in-process task in the bridge's place
                bridge = stack.enter_context(contextlib.closing(
                    InProcess(python, task.options, num_envs))).measure
            else:
                bridge = functools.partial(measure_bridge, task, generator=generator)
            turns.append({"inprocess": inprocess.measure, "bridge": bridge})
        for pair_turns in turns:
            for measure_side in pair_turns.values():
                measure_side(args.warmup)
        turn = args.settle + args.steps
        for k in range(args.rounds):
            for pair in (*range(k % args.pairs, args.pairs), *range(k % args.pairs)):
                sides = {}
                for side in (("bridge", "inprocess") if k % 2 else ("inprocess", "bridge")):
                    seconds = turns[pair][side](turn)
                    sides[side] = [s * 1e3 for s in seconds]
                inside_ms, bridge_ms = (statistics.median(sides[side][args.settle:])
                                        for side in ("inprocess", "bridge"))
                rounds.append({"pair": pair, "inprocess_ms": inside_ms, "bridge_ms": bridge_ms,
                               "ratio": bridge_ms / inside_ms, "steps_ms": sides})
    return {"num_envs": num_envs, "rounds": rounds,
            "inprocess_ms": statistics.median(r["inprocess_ms"] for r in rounds),
            "bridge_ms": statistics.median(r["bridge_ms"] for r in rounds),
            "ratio": statistics.median(r["ratio"] for r in rounds),
            "pair_ratios": [statistics.median(r["ratio"] for r in rounds if r["pair"] == pair)
                            for pair in range(args.pairs)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 1024])
    parser.add_argument("--control", action="store_true", help="a second in-process task "
                        "in the bridge's place: the ratio of two identical processes, the "
                        "floor under the bridge's")
    parser.add_argument("--pairs", type=int, default=1, help="pairs of processes (in-process "
                        "and bridged) started and measured side by side: a process's own "
                        "speed varies by a few percent from one start to the next")
    add_turn_options(parser)
    add_saved_options(parser, "task-bridge")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error(f"--pairs must be at least 1, got {args.pairs}")
    publish_figures(args, measure)


def add_turn_options(parser: argparse.ArgumentParser) -> None:
    """How the two sides take turns, and on what: this benchmark's and
    ``benchmarks/latency/task_bridge_phases.py``'s."""
    parser.add_argument("--steps", type=int, default=3, help="steps per side and round")
    parser.add_argument("--settle", type=int, default=2, help="steps at the start of each "
                        "side's turn, left out of its median")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--sim-device", default="cpu", help="cpu, or cuda:N (GPU pipeline)")
    parser.add_argument("--python", default=None, help="the worker's base Python (default: "
                        "a Python 3.8 from UNISIM_PY38 or .venv38); the SDK fake is put on it")


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every size's figures and their table, saved to ``--json`` after each size."""
    # As a trainer on this host runs (unisim.training): torch on one thread, so that the
    # host's thread pool, spinning after an op, takes no core from the worker's.
    torch.set_num_threads(1)
    base = base_python(args.python)
    python = isaacgym_fake_python(base)
    other = "again" if args.control else "bridge"  # what the second column measured
    # every process here, workers too, a client of the MPS server there (gpu_run.sh)
    mps = "; MPS clients" if os.environ.get("CUDA_MPS_PIPE_DIRECTORY") else ""
    pairs = f", over {args.pairs} pairs of processes" if args.pairs > 1 else ""
    header = [f"{stamp()}; the CI ant on the SDK fake ({args.sim_device}, {os.cpu_count()} "
              f"CPUs{mps}), ms per step, median of {args.rounds} rounds x {args.steps} steps "
              f"(after {args.settle} settling){pairs}",
              f"{'N':>6} {'in-process':>11} {other:>9} {other + ' / in-process':>20}"
              + ("  each pair's" if args.pairs > 1 else "")]
    data: dict[str, Any] = {"sim_device": args.sim_device, "python": base,
                            "control": args.control, "pairs": args.pairs,
                            "command": invocation(), "results": [], "lines": header}
    for num_envs in args.sizes:
        r = compare(python, num_envs, args)
        data["results"].append(r)
        each = "  " + " ".join(f"{ratio:.3f}" for ratio in r["pair_ratios"])
        data["lines"].append(f"{r['num_envs']:>6} {r['inprocess_ms']:>11.2f} "
                             f"{r['bridge_ms']:>9.2f} {r['ratio']:>20.3f}"
                             + (each if args.pairs > 1 else ""))
        if args.json:
            Path(args.json).write_text(json.dumps(data, indent=2) + "\n")
    return data


def base_python(python: str | None) -> str:
    """The worker's base interpreter: ``--python``, else a Python 3.8 (``UNISIM_PY38`` or
    .venv38), else this one."""
    base = shutil.which(python) if python else find_python38()[0] or sys.executable
    if base is None:
        raise SystemExit(f"--python {python}: no such interpreter")
    return base


if __name__ == "__main__":
    main()
