"""Soak: many steps, resets and create/close cycles; descriptors, RSS and /dev/shm must stay flat.

    python tools/reliability/soak.py            # 100,000 steps, 10,000 resets, 1,000 cycles
    python tools/reliability/soak.py --quick    # a short version (CI)
    python tools/reliability/soak.py --publish  # also write the result into docs/reliability.md
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

import unisim

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "figures"))
from doc_figures import previous, publish


def snapshot() -> dict[str, int]:
    rss_pages = int(Path("/proc/self/statm").read_text().split()[1])
    return {"open fds": len(os.listdir("/proc/self/fd")),
            "RSS (KiB)": rss_pages * os.sysconf("SC_PAGE_SIZE") // 1024,
            "/dev/shm unisim entries": len(list(Path("/dev/shm").glob("unisim-*")))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1/50 of every count")
    parser.add_argument("--publish", action="store_true",
                        help="write the figures into docs/reliability.md (figures:soak)")
    args = parser.parse_args()
    scale = 50 if args.quick else 1
    steps, resets, cycles = 100_000 // scale, 10_000 // scale, 1_000 // scale
    model = "cartpole"
    # Warm up once so that imports and first-use allocations are not counted as growth.
    with unisim.Backend("mujoco", model=model, num_envs=16, progress=False) as sim:
        sim.step()
    start, started = snapshot(), time.perf_counter()
    with unisim.Backend("mujoco", model=model, num_envs=16, progress=False) as sim:
        ctrl = np.zeros((16, 1))
        for i in tqdm(range(steps), desc="steps", mininterval=1.0):
            ctrl[:, 0] = np.sin(i * 0.01)
            sim.step(ctrl)
        for i in tqdm(range(resets), desc="resets", mininterval=1.0):
            sim.reset([i % 16])
    middle = snapshot()
    for _ in tqdm(range(cycles), desc="create/close", mininterval=1.0):
        with unisim.Backend("mujoco", model=model, num_envs=4, progress=False) as sim:
            sim.step()
    end = snapshot()
    seconds = time.perf_counter() - started
    lines = [f"{steps} steps, {resets} resets, {cycles} create/close cycles in {seconds:.0f} s",
             f"{'':<26}{'start':>10}{'after steps':>13}{'end':>10}"]
    for key in start:
        lines.append(f"{key:<26}{start[key]:>10}{middle[key]:>13}{end[key]:>10}")
    flat = (end["open fds"] == start["open fds"]
            and end["/dev/shm unisim entries"] == start["/dev/shm unisim entries"]
            and end["RSS (KiB)"] < start["RSS (KiB)"] * 1.1 + 4096)
    lines.append("flat" if flat else "NOT FLAT")
    print("\n" + "\n".join(lines))
    if args.publish:
        quick = " --quick" if args.quick else ""
        command = f"python tools/reliability/soak.py{quick} --publish"
        run = {"date": time.strftime("%Y-%m-%d"), "cpus": len(os.sched_getaffinity(0)),
               "python": platform.python_version(), "seconds": round(seconds, 1),
               "flat": flat, "start": start, "after_steps": middle, "end": end}
        runs = [r for r in (previous("soak") or {}).get("runs", [])
                if r.get("steps") == steps] + [{**run, "steps": steps}]
        times = [r["seconds"] for r in runs]
        block = ["```", f"$ {command.removesuffix(' --publish')}    # {run['date']}, "
                 f"{run['cpus']}-vCPU VM shared with other jobs", *lines, "```", "",
                 f"The counts are the same in every run; the time varies with the load: "
                 f"{min(times):.0f} to {max(times):.0f} s over the {len(runs)} run(s) of "
                 "this length published so far."]
        publish("soak", "\n".join(block), {"runs": runs}, command)
    return 0 if flat else 1


if __name__ == "__main__":
    raise SystemExit(main())
