"""The IsaacGym type gate (tools/typecheck/isaacgym_typecheck.py): passes the adapter, can fail."""

from __future__ import annotations

import ast
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
    for node in ast.parse(SCRIPT.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "ADAPTER":
            return len(ast.literal_eval(node.value))
    raise AssertionError("tools/typecheck/isaacgym_typecheck.py has no ADAPTER tuple")


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
    worker = tmp_path / "worker" / "engines"
    worker.mkdir(parents=True)
    (worker.parent / "__init__.py").write_text("")
    for source in (ROOT / "worker" / "engines").glob("*.py"):
        text = source.read_text()
        if source.name == "isaacgym_sim.py":
            planted = text.replace("self.gym.add_ground(sim, plane)", "self.gym.add_ground(sim)")
            assert planted != text
            text = planted
        (worker / source.name).write_text(text)
    result = gate("--worker", worker.parent, worker / "isaacgym_sim.py")
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'Missing positional argument "params" in call to "add_ground" of "Gym"' \
        in result.stdout
