"""The cost of physics randomisation at reset: a reset of every env with and without it.

Two backends of the same scene side by side, one plain and one randomising every
parameter (friction, mass, DOF damping, stiffness and armature, actuator gain, gravity) at
reset; their resets alternate, and the figure is the median over repetitions of the
paired ratio (design.md section 9: these machines drift by 2x over minutes). Also timed:
randomising mid-episode (``Backend.randomize``) and a push (``Backend.push``).

    python -m benchmarks.randomization.resets          # 4096 envs; writes the
                                                       # figures:randomization block of
                                                       # docs/benchmarks.md (doc_figures)
    python -m benchmarks.randomization.resets --quick  # 256 envs, prints only
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import unisim
from unisim.physics_randomization import (
    PhysicsRandomization,
    Push,
    Uniform,
    armature,
    damping,
    friction,
    gain,
    gravity,
    mass,
    stiffness,
)

JOINTS = ["fl_hip", "fl_knee", "fr_hip", "fr_knee", "bl_hip", "bl_knee", "br_hip", "br_knee"]
BODIES = ["world", "torso", "front_left", "front_left_shin", "front_right", "front_right_shin",
          "back_left", "back_left_shin", "back_right", "back_right_shin"]
EVERYTHING = PhysicsRandomization(parameters=(
    friction(Uniform(0.3, 1.25), bodies=BODIES),
    mass(Uniform(-1.0, 2.0), bodies=["torso"], operation="add"),
    mass(Uniform(0.8, 1.2), bodies=BODIES[2:], label="leg_mass"),
    damping(Uniform(0.5, 1.5), joints=JOINTS),
    stiffness(Uniform(0.0, 1.0), joints=JOINTS, operation="set"),
    armature(Uniform(0.5, 1.5), joints=JOINTS),
    gain(Uniform(0.8, 1.2), actuators=JOINTS),
    gravity(Uniform(-0.3, 0.3)),
), push=Push(Uniform(-0.5, 0.5)), seed=0)


def timed(action: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def measure(python: str | None, num_envs: int, reps: int) -> dict[str, Any]:
    options: dict[str, Any] = {"model": "quadruped", "keyframe": "stand",
                               "num_envs": num_envs, "python": python, "progress": False,
                               "timeout": 600.0}
    with unisim.Backend("mujoco", **options) as plain, \
            unisim.Backend("mujoco", randomization=EVERYTHING, **options) as randomized:
        plain.step(substeps=2)
        randomized.step(substeps=2)
        rows: dict[str, list[float]] = {"reset": [], "reset_randomized": [],
                                        "randomize_now": [], "push": []}
        for rep in range(reps):
            pair = [("reset", lambda: plain.reset()),
                    ("reset_randomized", lambda: randomized.reset())]
            for name, action in pair if rep % 2 == 0 else pair[::-1]:
                rows[name].append(timed(action))
            rows["randomize_now"].append(timed(lambda: randomized.randomize()))
            rows["push"].append(timed(lambda: randomized.push()))
        ratio = statistics.median(r / p for r, p in zip(rows["reset_randomized"],
                                                        rows["reset"], strict=True))
        return {"engine": f"MuJoCo {plain.layout.engine_version} ({plain.layout.stepper})",
                "workers": len(plain.worker_pids), "num_envs": num_envs, "reps": reps,
                "median_s": {k: statistics.median(v) for k, v in rows.items()},
                "randomized_over_plain": ratio}


def table(results: list[dict[str, Any]]) -> str:
    lines = ["| worker | envs | reset | reset, randomised | ratio | randomise now | push |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        s = r["median_s"]
        lines.append(
            f"| {r['engine']}, {r['workers']} worker(s) | {r['num_envs']} | "
            f"{s['reset'] * 1e3:.1f} ms | {s['reset_randomized'] * 1e3:.1f} ms | "
            f"**{r['randomized_over_plain']:.2f}x** | {s['randomize_now'] * 1e3:.1f} ms | "
            f"{s['push'] * 1e3:.1f} ms |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="256 envs, 3 reps, no docs")
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    num_envs, reps = (256, 3) if args.quick else (4096, args.reps)
    workers: list[str | None] = [None]
    py38 = os.environ.get("UNISIM_PY38")
    if py38:
        workers.append(py38)
    else:
        print("UNISIM_PY38 unset: the Python 3.8 worker is left out", file=sys.stderr)
    results = [measure(python, num_envs, reps) for python in workers]
    block = (f"Median of {reps} alternating repetitions, {num_envs} quadruped envs, every "
             "env reset at once; randomised: friction of every geom, torso and leg masses, "
             "damping, stiffness, armature and servo gain of all 8 joints, gravity "
             f"({EVERYTHING.columns} values per env; `benchmarks/randomization/resets.py`).\n\n"
             + table(results))
    print(block)
    if not args.quick:
        command = "python -m benchmarks.randomization.resets" + (
            "" if args.reps == 9 else f" --reps {args.reps}")
        from tools.figures.doc_figures import publish

        print(f"wrote {publish('randomization', block, results, command)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
