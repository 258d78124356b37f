"""What the task bridge's tests share: where the CI tasks live and the ant's config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
FAULTY = ROOT / "tests" / "fixtures"
INPROCESS = ROOT / "benchmarks" / "py38" / "task_bridge_inprocess.py"
ANT = "isaacgym_tasks.ant:Ant"


def ant_cfg(episode_length: int = 200) -> dict[str, Any]:
    """The CI ant's config (IsaacGymEnvs' task section) with episodes of that length."""
    cfg: dict[str, Any] = json.loads((EXAMPLES / "isaacgym_tasks" / "cfg" / "ant.json")
                                     .read_text())
    cfg["env"]["episodeLength"] = episode_length
    return cfg
