"""The SDK fake's memory at legged_gym's scale: the worker's peak RSS per number of envs.

Runs ``python -m unisim task check`` on legged_gym's ``anymal_c_rough`` (rough trimesh
terrain, unmodified, by its task registry) at each ``--num-envs``, as a user types it, and
reads the peak resident memory (``VmHWM``) of the worker process from /proc while it runs.
The sizes run at once: a process's memory does not depend on its neighbours, and check's
100 steps at 4096 envs take about an hour on 2 cores (``--timeout 600``: a step of 4096
envs may take over the default minute there). Prints the peak and the increase per
env between consecutive sizes; ``--publish`` writes them into docs/isaacgym.md
(figures:fake-memory).

    MUJOCO_GL=egl python -m benchmarks.isaacgym_fake.memory --legged-gym ~/legged_gym \\
        --python ~/venv38/bin/python [--num-envs 64 256 1024 4096] [--publish]

``--python``: a Python 3.8 with what legged_gym imports (envs/public-tasks38.txt); it gets
the SDK fake (``unisim.testing.isaacgym_fake_python``). Asserts nothing about the figures.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from tools.figures.doc_figures import invocation, publish, stamp
from unisim import split
from unisim.testing import isaacgym_fake_python

TASK = "anymal_c_rough"
STEPS = re.compile(r"100 steps of random actions: ([0-9.]+) s")


@dataclass
class Run:
    num_envs: int
    peak_mb: float = 0.0  # the worker's VmHWM, MB (2**20 bytes)
    wall_s: float = 0.0  # check's, sharing the machine with the other sizes
    failure: str = ""


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (from /proc/*/stat's parent field)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(parent, []).append(int(entry.name))
    found, queue = [], [pid]
    while queue:
        children = parents.get(queue.pop(), [])
        found += children
        queue += children
    return found


def high_water_mb(pid: int) -> float:
    """A process's peak resident set so far (VmHWM), MB; 0 if it has gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def check(legged_gym: Path, python: str, num_envs: int) -> Run:
    """``unisim task check`` of the task at ``num_envs``, the worker's peak RSS polled."""
    run = Run(num_envs)
    command = [sys.executable, "-m", "unisim", "task", "check", TASK, "--registry",
               "legged_gym.envs:task_registry", "--path", str(legged_gym), "--python", python,
               "--num-envs", str(num_envs), "--timeout", "600"]
    start = time.monotonic()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as host:
        peaks: dict[int, float] = {}
        while host.poll() is None:
            for pid in descendants(host.pid):  # the worker (the host's torch is not counted)
                peaks[pid] = max(peaks.get(pid, 0.0), high_water_mb(pid))
            time.sleep(0.2)
        output = host.stdout.read() if host.stdout else ""
    run.wall_s = time.monotonic() - start
    run.peak_mb = max(peaks.values(), default=0.0)
    if host.returncode != 0 or STEPS.search(output) is None:
        lines = [line for line in output.splitlines() if line.strip()]
        run.failure = lines[-1] if lines else "no output"
    return run


def table(runs: list[Run]) -> list[str]:
    lines = ["| envs | worker peak RSS | MB per env (from the previous row) |",
             "| --- | --- | --- |"]
    previous: Run | None = None
    for run in runs:
        if run.failure:
            lines.append(f"| {run.num_envs} | failed: {run.failure.replace('|', '/')} | |")
            continue
        per_env = (f"{(run.peak_mb - previous.peak_mb) / (run.num_envs - previous.num_envs):.2f}"
                   if previous else "")
        lines.append(f"| {run.num_envs} | {run.peak_mb / 1024:.2f} GB | {per_env} |")
        previous = run
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--legged-gym", type=Path, required=True, help="a legged_gym checkout")
    parser.add_argument("--python", required=True,
                        help="the worker's Python 3.8, with legged_gym's dependencies")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 256, 1024, 4096])
    parser.add_argument("--publish", action="store_true",
                        help="write the table into docs/isaacgym.md")
    args = parser.parse_args()
    worker = isaacgym_fake_python(args.python)
    sizes = sorted(set(args.num_envs))
    print(f"{TASK}: check at {', '.join(map(str, sizes))} envs, at once", flush=True)
    legged_gym = args.legged_gym.expanduser().resolve()
    with concurrent.futures.ThreadPoolExecutor(len(sizes)) as pool:
        runs = list(pool.map(lambda n: check(legged_gym, worker, n), sizes))
    lines = [f"{stamp()}; {split.cores()} cores; legged_gym `{TASK}` (trimesh terrain) through "
             f"`python -m unisim task check`, the worker on the SDK fake, the CPU pipeline", "",
             *table(runs)]
    print("\n".join(lines))
    if args.publish:
        data = {"task": TASK, "mujoco_gl": os.environ.get("MUJOCO_GL", ""),
                "runs": [asdict(run) for run in runs]}
        print(publish("fake-memory", "\n".join(lines) + "\n", data, invocation()))
    return 1 if any(run.failure for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
