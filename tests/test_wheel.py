"""A plain (non-editable) install from the wheel carries the worker, protocol and test kit."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import numpy as np, unisim
assert "site-packages" in unisim.__file__, unisim.__file__
with unisim.Backend("mujoco", model="cartpole", num_envs=3) as sim:
    sim.step(np.ones((3, 1)), substeps=5)
    assert sim.qpos[:, 0].min() > 0, sim.qpos
print("stepped", sim.layout.engine_version)
"""


@pytest.mark.timeout(600)  # builds a wheel and a venv: minutes on a loaded machine
def test_wheel_installs_and_steps_a_model(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path),
                    str(ROOT)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("unisim_bridge-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for required in ("unisim/worker/main.py", "unisim/worker/bootstrap.py",
                     "unisim/worker/engines/mujoco/steppers.py",
                     "unisim/protocol/framing.py", "unisim/protocol/PROTOCOL.md",
                     "unisim/models/quadruped.xml", "unisim/models/quadruped_policy.npz",
                     "unisim/testing/pytest_plugin.py",
                     "unisim/isaacgym_fake/isaacgym/gymapi.py"):
        assert required in names, f"{required} missing from {wheel.name}"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", f"{wheel}[mujoco]"], check=True,
                   capture_output=True)
    result = subprocess.run([python, "-c", SCRIPT], cwd=tmp_path, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "stepped" in result.stdout
    # The test kit's documented example runs from the wheel, through its pytest plugin.
    subprocess.run([python, "-m", "pip", "install", "-q", "pytest"], check=True,
                   capture_output=True)
    example = ROOT / "docs" / "examples" / "test_with_unisim_kit.py"
    result = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(example)], cwd=tmp_path, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout
