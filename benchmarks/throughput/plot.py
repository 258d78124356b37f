"""env-steps/s against N for every system of a suite run, as a PNG (matplotlib).

Re-plot a saved run: ``python -m benchmarks.throughput.plot RESULTS.json OUT.png``, from the
suite's ``--json`` or from the result file that ``--name`` publishes (``docs/results/NAME.json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import ticker


def plot_throughput(results: dict[str, Any], path: Path) -> None:
    figure, axes = plt.subplots(1, 2, figsize=(14, 7.5), width_ratios=[3, 2])
    for ax, section, title in ((axes[0], "quadruped", "bundled quadruped, frame skip 5"),
                               (axes[1], "ant", "gymnasium ant.xml / EnvPool Ant-v4")):
        by_size = results.get(section, {})
        names = list(dict.fromkeys(k for d in by_size.values() for k in d["median_rate"]))
        for name in names:
            points = sorted((int(n), d["median_rate"][name]) for n, d in by_size.items()
                            if name in d["median_rate"])
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, marker="o", label=name)
        sizes = sorted(int(n) for n in by_size)
        ax.set(xscale="log", yscale="log", xlabel="N (parallel envs)", ylabel="env-steps/s",
               title=title, xticks=sizes, xticklabels=[str(n) for n in sizes])
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.yaxis.set_minor_locator(ticker.LogLocator(subs=(1.5, 2, 3, 4, 5, 6, 7, 8, 9)))
        ax.yaxis.set_major_formatter(ticker.StrMethodFormatter("{x:,.0f}"))
        ax.yaxis.set_minor_formatter(ticker.StrMethodFormatter("{x:,.0f}"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


if __name__ == "__main__":
    saved = json.loads(Path(sys.argv[1]).read_text())
    plot_throughput(saved.get("data", saved), Path(sys.argv[2]))
