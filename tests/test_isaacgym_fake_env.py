"""``unisim.testing.isaacgym_fake_python``: a worker interpreter whose isaacgym is the fake."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from unisim.errors import SetupError
from unisim.testing import isaacgym_fake_python


def test_built_once_even_by_two_callers_at_once(py38: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNISIM_CACHE_DIR", str(tmp_path))
    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(isaacgym_fake_python, [py38, py38])
    assert first == second == isaacgym_fake_python(py38)
    assert len(list(tmp_path.iterdir())) == 1  # no staging folder left behind
    # no PYTHONPATH: the venv's .pth puts the fake first and the base's packages after it
    result = subprocess.run([first, "-c", "import isaacgym, msgpack, mujoco; "
                             "from isaacgym import gymapi, gymtorch; print(isaacgym.FAKE)"],
                            capture_output=True, text=True, check=False, timeout=120,
                            env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_a_base_without_the_modules_is_named_with_the_pip_command(py38: str,
                                                                   tmp_path: Path) -> None:
    bare = tmp_path / "bare"  # a Python 3.8 with nothing installed
    subprocess.run([py38, "-m", "venv", "--without-pip", str(bare)], check=True)
    with pytest.raises(SetupError) as error:
        isaacgym_fake_python(bare / "bin" / "python")
    message = str(error.value)
    for name in ("numpy", "msgpack", "mujoco", "torch"):
        assert name in message
    assert "pip install torch==1.13.1" in message  # the hint, with the SDK's torch


def test_a_missing_interpreter_is_a_setup_error(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match="not an executable Python"):
        isaacgym_fake_python(tmp_path / "python")
