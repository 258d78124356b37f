"""Run the demo (``python -m unisim demo``) and publish its output into README.md.

    python tools/figures/demo_figures.py      # adds this run to docs/results/demo.json

The block shows this run's output and the range of each figure over all runs published
so far: the distance walked is the same in every run on one machine, speeds vary.
"""

from __future__ import annotations

import sys

from doc_figures import previous, publish
from unisim.demo import demo, report


def main() -> int:
    result = demo(num_envs=64, steps=300, python=None, video=None)
    lines = report(result)
    print("\n".join(lines))
    local = result.replays[-1]
    run = {"python": result.python, "distance_m": result.distance_m,
           "min_distance_m": result.min_distance_m, "fallen": result.fallen,
           "rates": {replay.label: replay.rate for replay in result.replays}}
    runs = [*(previous("demo") or {}).get("runs", []), run]
    distances = sorted({f"{r['distance_m']:.2f}" for r in runs})
    ranges = []
    for replay in result.replays:
        rates = [r["rates"][replay.label] for r in runs if replay.label in r["rates"]]
        ranges.append(f"{replay.label.split(',')[0]} {min(rates):,.0f} to {max(rates):,.0f}")
    block = ["```", "$ make demo", *lines, "video of env 0: runs/demo/quadruped.mp4", "```",
             "",
             f"Over the {len(runs)} runs published so far on this 2-core machine, shared "
             f"with other jobs: distance {' / '.join(distances)} m (the same in every run on "
             f"one machine); env-steps/s vary with the load: {'; '.join(ranges)} "
             f"(in-process: {local.label.removeprefix('in-process, ')})."]
    publish("demo", "\n".join(block), {"runs": runs}, "python tools/figures/demo_figures.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
