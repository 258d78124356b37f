"""An rsl_rl ``LogWriter`` that keeps the learning curve and shows a progress bar.

rsl_rl builds its writer from ``cfg["logger"]``; this one appends one JSON line per
iteration to ``metrics.jsonl`` in the run folder and moves a tqdm bar with the
iteration's mean return and episode length, in place of rsl_rl's page-long printout.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rsl_rl.utils.log_writer import LogWriter
from tqdm import tqdm

METRICS = "metrics.jsonl"
KEYS = {"Train/mean_reward": "mean_return", "Train/mean_episode_length": "mean_episode_length",
        "Perf/collection_time": "collection_s", "Perf/learning_time": "learning_s",
        "Policy/mean_std": "action_std"}


class ProgressWriter(LogWriter):  # type: ignore[misc]
    def __init__(self, log_dir: str, total: int, description: str = "train") -> None:
        self.path = Path(log_dir) / METRICS
        self.started = time.perf_counter()
        self.row: dict[str, Any] = {}
        self.bar: tqdm[Any] = tqdm(total=total, desc=description, unit="it", dynamic_ncols=True)

    def add_scalar(self, tag: str, scalar_value: float, global_step: int) -> None:
        if tag not in KEYS and not tag.startswith("Episode_"):
            return  # also skips the "/time" curves, whose step is seconds, not iterations
        if self.row and self.row["iteration"] != global_step:
            self._flush()
        self.row.setdefault("iteration", global_step)
        self.row[KEYS.get(tag, tag)] = float(scalar_value)

    def stop(self) -> None:
        self._flush()
        self.bar.close()

    def _flush(self) -> None:
        if not self.row:
            return
        self.row["wall_s"] = round(time.perf_counter() - self.started, 3)
        with self.path.open("a") as file:
            file.write(json.dumps(self.row) + "\n")
        if "mean_return" in self.row:
            self.bar.set_postfix(ret=f"{self.row['mean_return']:.1f}",
                                 len=f"{self.row['mean_episode_length']:.0f}", refresh=False)
        self.bar.update(1)
        self.row = {}


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    """The rows ``ProgressWriter`` wrote, in order."""
    with (run_dir / METRICS).open() as file:
        return [json.loads(line) for line in file if line.strip()]
