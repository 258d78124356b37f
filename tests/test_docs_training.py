"""docs/training.md's custom task runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from unisim.tasks import TASKS

DOC = Path(__file__).resolve().parents[1] / "docs" / "training.md"


def examples_marked_tested() -> list[str]:
    pattern = r"<!-- tested: [^>]*-->\n```python\n(.*?)```"
    return re.findall(pattern, DOC.read_text(), flags=re.S)


def test_the_custom_task_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = examples_marked_tested()
    assert len(block.splitlines()) < 50  # "a few dozen lines"
    try:
        exec(compile(block, str(DOC), "exec"), {"__name__": "docs_example"})
    finally:
        TASKS.pop("cartpole-swingup", None)
    printed = capsys.readouterr().out
    assert printed.startswith("torch.Size([16, 5]) tensor(")
    mean_reward = float(re.search(r"tensor\((-?[\d.]+)", printed).group(1))
    assert mean_reward < -0.5  # hanging down: cos(angle) near -1
