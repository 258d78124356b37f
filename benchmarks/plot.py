"""env-steps/s against N for every system of a suite run, as a PNG (matplotlib)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import ticker


def plot_throughput(results: dict[str, Any], path: Path) -> None:
    figure, axes = plt.subplots(1, 2, figsize=(13, 5.5), width_ratios=[3, 2])
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
        ax.yaxis.set_major_formatter(ticker.StrMethodFormatter("{x:,.0f}"))
        ax.yaxis.set_minor_formatter(ticker.StrMethodFormatter("{x:,.0f}"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
