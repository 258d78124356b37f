"""The learning-curve figure of a run: mean return and mean episode length per iteration."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plot_curves(rows: list[dict[str, Any]], path: Path, title: str,
                max_episode_length: int) -> Path:
    """Write a two-panel PNG of ``rows`` (``ProgressWriter``'s) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [row for row in rows if "mean_return" in row]
    iterations = [row["iteration"] + 1 for row in rows]
    figure, (returns, lengths) = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    returns.plot(iterations, [row["mean_return"] for row in rows], color="tab:blue")
    returns.set(xlabel="PPO iteration", ylabel="mean episode return", title="return")
    lengths.plot(iterations, [row["mean_episode_length"] for row in rows], color="tab:orange")
    lengths.axhline(max_episode_length, color="gray", linestyle=":", label="maximum")
    lengths.axhline(0.9 * max_episode_length, color="tab:green", linestyle="--",
                    label="90% of maximum")
    lengths.set(xlabel="PPO iteration", ylabel="mean episode length (steps)",
                title="episode length", ylim=(0, max_episode_length * 1.05))
    lengths.legend(loc="lower right")
    if rows:
        minutes = rows[-1]["wall_s"] / 60
        title = f"{title} ({len(rows)} iterations, {minutes:.1f} min)"
    figure.suptitle(title)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
