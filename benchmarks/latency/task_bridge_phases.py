"""Where a bridged step's time goes: each part's median, beside the in-process step.

    .venv/bin/python -m benchmarks.latency.task_bridge_phases [--num-envs 1024]
    python3 -m benchmarks.latency.task_bridge_phases --python python3 --sim-device cuda:0

The task and its in-process reference are ``benchmarks/throughput/task_bridge.py``'s (the
CI ant on the SDK fake), stepped in turns the same way, each turn's first ``--settle``
steps left out. The host stamps ``BridgedTask.step`` and the ``sim.step`` inside it; the
worker, started with ``UNISIM_TRACE_TIMES`` (``unisim_worker.trace``), stamps when it saw
each request, the task's own ``step`` and when it rang the reply. Both read
CLOCK_MONOTONIC, so the stamps line up into the parts below, whose medians add up to about
the bridged step's. The task's step in the worker beside the in-process one says whether
the bridge slows the task or only adds a cost of its own (the other rows).
Prints the figures; asserts nothing. The tracing itself costs the worker a line written
after each reply, off the host's wait.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks.measure import add_saved_options, publish_figures
from benchmarks.throughput.task_bridge import EXAMPLES, InProcess, add_turn_options, base_python
from tools.figures.doc_figures import invocation, stamp
from unisim.task_bridge import BridgedTask
from unisim.testing import isaacgym_fake_python

PARTS = (  # (label, from stamp, to stamp)
    ("host, before sim.step (the actions' copy and check)", "started", "sim_started"),
    ("until the worker sees the request", "sim_started", "woke"),
    ("worker, until the task's step", "woke", "task_started"),
    ("the task's step, in the worker", "task_started", "task_ended"),
    ("worker, after the task's step (outputs, reply)", "task_ended", "replied"),
    ("until sim.step returns", "replied", "sim_ended"),
    ("host, after sim.step (the outputs copied out)", "sim_ended", "ended"),
)


def bridged_steps(task: BridgedTask, steps: int, generator: torch.Generator
                  ) -> list[dict[str, float]]:
    """The host's stamps of ``steps`` steps of random actions."""
    stamps: list[dict[str, float]] = []
    sim_step = task.sim.step

    def stamped_sim_step(*args: Any, **kwargs: Any) -> None:
        stamps[-1]["sim_started"] = time.perf_counter()
        sim_step(*args, **kwargs)
        stamps[-1]["sim_ended"] = time.perf_counter()

    task.sim.step = stamped_sim_step  # type: ignore[method-assign]
    cuda = task.device.type == "cuda"
    try:
        for _ in range(steps):
            actions = (torch.rand(task.num_envs, task.num_actions, generator=generator) * 2.0
                       - 1.0).to(task.device)
            if cuda:
                torch.cuda.synchronize()
            stamps.append({"started": time.perf_counter()})
            task.step(actions)
            if cuda:
                torch.cuda.synchronize()
            stamps[-1]["ended"] = time.perf_counter()
    finally:
        del task.sim.step
    return stamps


def worker_stamps(folder: Path) -> list[dict[str, float]]:
    """The worker's STEP lines (``unisim_worker.trace``), in order."""
    lines = [json.loads(line) for path in folder.glob("*.jsonl")
             for line in path.read_text().splitlines()]
    return [{"woke": line["woke"], "task_started": line["task_step"][0],
             "task_ended": line["task_step"][1], "replied": line["replied"]}
            for line in lines if line["command"] == "STEP"]


def phases(python: str, args: argparse.Namespace) -> dict[str, Any]:
    """Each part's median (µs) over the measured steps, and the in-process step's."""
    cfg = json.loads((EXAMPLES / "isaacgym_tasks" / "cfg" / "ant.json").read_text())
    plane = "cuda" if args.sim_device.startswith("cuda") else "shm"
    host: list[dict[str, float]] = []
    inprocess: list[float] = []
    with tempfile.TemporaryDirectory(prefix="unisim-phases-") as folder:
        os.environ["UNISIM_TRACE_TIMES"] = folder  # the worker inherits it
        try:
            task = BridgedTask("isaacgym_tasks.ant:Ant", args.num_envs, style="vec_task",
                               cfg=cfg, paths=[EXAMPLES], python=python,
                               sim_device=args.sim_device, data_plane=plane, timeout=600.0)
        finally:
            del os.environ["UNISIM_TRACE_TIMES"]
        with task:
            reference = InProcess(python, task.options, args.num_envs)
            try:
                generator = torch.Generator().manual_seed(0)
                reference.measure(args.warmup)
                bridged_steps(task, args.warmup, generator)
                turn = args.settle + args.steps
                for _ in range(args.rounds):
                    inprocess += reference.measure(turn)[args.settle:]
                    host += bridged_steps(task, turn, generator)[args.settle:]
            finally:
                reference.close()
        worker = worker_stamps(Path(folder))
    # Each host step holds exactly one worker STEP: the one seen while its sim.step ran.
    steps = []
    for stamps in host:
        seen = [w for w in worker if stamps["sim_started"] < w["woke"] < stamps["sim_ended"]]
        if len(seen) == 1:
            steps.append({**stamps, **seen[0]})
    if len(steps) < len(host):
        raise RuntimeError(f"{len(host) - len(steps)} of {len(host)} host steps met no single "
                           "worker STEP: are the stamps on one clock?")
    medians = {label: 1e6 * statistics.median(s[end] - s[start] for s in steps)
               for label, start, end in PARTS}
    return {"num_envs": args.num_envs, "steps": len(steps), "parts": medians,
            "bridged": 1e6 * statistics.median(s["ended"] - s["started"] for s in steps),
            "inprocess": 1e6 * statistics.median(inprocess)}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    torch.set_num_threads(1)  # as a trainer on this host runs (unisim.training)
    base = base_python(args.python)
    r = phases(isaacgym_fake_python(base), args)
    width = max(len(label) for label, _, _ in PARTS)
    lines = [f"{stamp()}; the CI ant on the SDK fake ({args.sim_device}, {os.cpu_count()} "
             f"CPUs), N = {r['num_envs']}, us, medians of {r['steps']} steps ({args.rounds} "
             f"rounds x {args.steps}, after {args.settle} settling)",
             *(f"{label:<{width}} {value:>9.0f}" for label, value in r["parts"].items()),
             f"{'the bridged step':<{width}} {r['bridged']:>9.0f}",
             f"{'the in-process step':<{width}} {r['inprocess']:>9.0f}"]
    return {**r, "sim_device": args.sim_device, "python": base, "command": invocation(),
            "lines": lines}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=1024)
    add_turn_options(parser)
    add_saved_options(parser, "task-bridge-phases")
    publish_figures(parser.parse_args(), measure)


if __name__ == "__main__":
    main()
