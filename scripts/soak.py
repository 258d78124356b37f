"""Soak: many steps, resets and create/close cycles; descriptors, RSS and /dev/shm must stay flat.

    python scripts/soak.py            # 100,000 steps, 10,000 resets, 1,000 create/close cycles
    python scripts/soak.py --quick    # a short version (CI)
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

import unisim


def snapshot() -> dict[str, int]:
    rss_pages = int(Path("/proc/self/statm").read_text().split()[1])
    return {"open fds": len(os.listdir("/proc/self/fd")),
            "RSS (KiB)": rss_pages * os.sysconf("SC_PAGE_SIZE") // 1024,
            "/dev/shm unisim entries": len(list(Path("/dev/shm").glob("unisim-*")))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1/50 of every count")
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
    print(f"\n{steps} steps, {resets} resets, {cycles} create/close cycles "
          f"in {time.perf_counter() - started:.0f} s")
    print(f"{'':<26}{'start':>10}{'after steps':>13}{'end':>10}")
    for key in start:
        print(f"{key:<26}{start[key]:>10}{middle[key]:>13}{end[key]:>10}")
    flat = (end["open fds"] == start["open fds"]
            and end["/dev/shm unisim entries"] == start["/dev/shm unisim entries"]
            and end["RSS (KiB)"] < start["RSS (KiB)"] * 1.1 + 4096)
    print("flat" if flat else "NOT FLAT")
    return 0 if flat else 1


if __name__ == "__main__":
    raise SystemExit(main())
