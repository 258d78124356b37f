"""A plain (non-editable) install of the three wheels (host, shared core, worker) carries the
worker, the protocol and the test kit, and runs a worker on Python 3.8."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import sys, numpy as np, unisim, unisim_protocol, unisim_worker
for package in (unisim, unisim_protocol):
    assert "site-packages" in package.__file__, package.__file__
python = sys.argv[1] if len(sys.argv) > 1 else None
with unisim.Backend("mujoco", model="cartpole", num_envs=3, python=python) as sim:
    sim.step(np.ones((3, 1)), substeps=5)
    assert sim.qpos[:, 0].min() > 0, sim.qpos
    print("stepped", sim.layout.engine_version, "on Python", sim.worker_info["python"])
"""
# Each wheel with a file of each of its parts; the host's names none of the others'.
WHEELS = {
    "unisim_bridge": ("unisim/models/quadruped.xml", "unisim/models/quadruped_policy.npz",
                      "unisim/testing/pytest_plugin.py"),
    "unisim_protocol": ("unisim_protocol/framing.py", "unisim_protocol/PROTOCOL.md"),
    "unisim_worker": ("unisim_worker/main.py", "unisim_worker/bootstrap.py",
                      "unisim_worker/engines/mujoco/steppers.py",
                      "unisim_worker/isaacgym_fake/isaacgym/gymapi.py"),
}


@pytest.mark.timeout(600)  # builds three wheels and a venv: minutes on a loaded machine
def test_the_three_wheels_install_and_step_a_worker_on_python38(tmp_path: Path,
                                                                 py38: str) -> None:
    for source in (ROOT / "protocol", ROOT / "worker", ROOT):
        subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path),
                        str(source)], check=True, capture_output=True)
    wheels = {}
    for name, required in WHEELS.items():
        wheel = next(tmp_path.glob(f"{name}-*.whl"))
        names = zipfile.ZipFile(wheel).namelist()
        for path in required:
            assert path in names, f"{path} missing from {wheel.name}"
        wheels[name] = wheel
    assert not any(n.startswith(("unisim_protocol/", "unisim_worker/"))
                   for n in zipfile.ZipFile(wheels["unisim_bridge"]).namelist())
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # the host's wheel names the other two as dependencies: pip takes them from beside it
    subprocess.run([python, "-m", "pip", "install", "-q", "--find-links", str(tmp_path),
                    f"{wheels['unisim_bridge']}[mujoco]"], check=True, capture_output=True)
    for worker in (None, py38):
        result = subprocess.run([python, "-c", SCRIPT, *([worker] if worker else [])],
                                cwd=tmp_path, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stderr
        assert "stepped" in result.stdout
    assert "on Python 3.8" in result.stdout, result.stdout
    # The test kit's documented example runs from the wheel, through its pytest plugin.
    subprocess.run([python, "-m", "pip", "install", "-q", "pytest"], check=True,
                   capture_output=True)
    example = ROOT / "docs" / "examples" / "test_with_unisim_kit.py"
    result = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(example)], cwd=tmp_path, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout
