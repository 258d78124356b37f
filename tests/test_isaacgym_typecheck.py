"""The IsaacGym type gate (tools/typecheck/isaacgym_typecheck.py): passes the adapter, can fail."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / ".venv-typecheck" / "bin" / "python"
SCRIPT = ROOT / "tools" / "typecheck" / "isaacgym_typecheck.py"

pytestmark = pytest.mark.skipif(
    not TOOLS.exists(), reason="no .venv-typecheck (mypy 1.16 + isaacgym-stubs): `make lint` "
    "or `make test` creates it")


def gate(*args: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TOOLS), str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=300, check=False)


def _adapter_files() -> int:
    """How many files the gate checks: its ``ADAPTER`` tuple, read from the script."""
    spec = importlib.util.spec_from_file_location("isaacgym_typecheck", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return len(script.ADAPTER)


def test_adapter_passes_the_gate() -> None:
    result = gate()
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Success: no issues found in {_adapter_files()} source files" in result.stdout


def test_a_wrong_gymapi_call_fails_the_gate() -> None:
    fixture = ROOT / "tests" / "fixtures" / "isaacgym_wrong_call.py"
    result = gate(fixture)
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'Argument 3 to "create_actor" of "Gym" has incompatible type "str"; ' \
        'expected "Transform"' in result.stdout


def test_a_wrong_gymapi_call_planted_in_the_adapter_fails_the_gate(tmp_path: Path) -> None:
    """The same check on a copy of the real adapter with one argument removed."""
    worker = tmp_path / "worker"
    shutil.copytree(ROOT / "worker" / "src" / "unisim_worker", worker)
    sim = worker / "engines" / "isaacgym" / "sim.py"
    text = sim.read_text()
    planted = text.replace("self.gym.add_ground(sim, plane)", "self.gym.add_ground(sim)")
    assert planted != text
    sim.write_text(planted)
    result = gate("--worker", worker, sim)
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'Missing positional argument "params" in call to "add_ground" of "Gym"' \
        in result.stdout
