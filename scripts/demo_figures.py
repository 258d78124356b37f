"""Run the demo (``python -m unisim demo``) and publish its output into README.md.

    python scripts/demo_figures.py      # adds this run to docs/results/demo.json

The block shows this run's output and the range of each figure over all runs published
so far: the distance walked is the same in every run on one machine, speeds vary.
"""

from __future__ import annotations

import sys
from dataclasses import asdict

from doc_figures import previous, publish
from unisim.demo import demo, report


def main() -> int:
    result = demo(num_envs=64, steps=300, python=None, video=None)
    lines = report(result)
    print("\n".join(lines))
    runs = [*(previous("demo") or {}).get("runs", []), asdict(result)]

    def span(key: str, fmt: str) -> str:
        low, high = (format(f(run[key] for run in runs), fmt) for f in (min, max))
        return low if low == high else f"{low} to {high}"

    ratios = [run["worker_rate"] / run["local_rate"] for run in runs]
    block = ["```", "$ make demo", *lines, "video of env 0: runs/demo/quadruped.mp4", "```",
             "",
             f"Over the {len(runs)} run(s) published so far on this 2-core machine, shared "
             f"with other jobs: distance {span('distance_m', '.2f')} m; worker "
             f"{span('worker_rate', ',.0f')} and in-process {span('local_rate', ',.0f')} "
             f"env-steps/s (ratio {min(ratios):.2f} to {max(ratios):.2f}). The distance is "
             "the same in every run on one machine; the speeds vary with the load."]
    publish("demo", "\n".join(block), {"runs": runs}, "python scripts/demo_figures.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
