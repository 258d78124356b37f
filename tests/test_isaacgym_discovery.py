"""Finding the IsaacGym worker interpreter, with real interpreters that lack IsaacGym."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import unisim
from unisim import isaacgym
from unisim.errors import SetupError

PY38 = os.environ.get("UNISIM_PY38") or ""


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No conda anywhere: HOME is empty and no conda variables are set."""
    for name in ("CONDA_PREFIX", "CONDA_EXE", "CONDA_ENVS_PATH", "CONDA_ENVS_DIRS",
                 isaacgym.ENV_PYTHON, isaacgym.ENV_HOME, "LD_LIBRARY_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(isaacgym, "CONDA_ROOTS", ("~/miniconda3", "~/mambaforge"))
    return tmp_path


def fake_conda_env(root: Path, python: str) -> Path:
    """``<root>/envs/hsgym`` whose bin/python is a real interpreter, with a lib dir."""
    env = root / "envs" / "hsgym"
    (env / "bin").mkdir(parents=True)
    (env / "lib").mkdir()
    (env / "bin" / "python").symlink_to(python)
    return env


def test_backend_without_any_isaacgym_interpreter_says_what_to_install(clean_env: Path) -> None:
    with pytest.raises(SetupError) as error:
        unisim.Backend("isaacgym", model="quadruped")
    text = str(error.value)
    assert "no IsaacGym interpreter found" in text
    assert str(clean_env / "miniconda3" / "envs" / "hsgym") in text
    assert "conda env create -f envs/hsgym.yml" in text


def test_a_modern_python_is_refused_for_its_version(clean_env: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(isaacgym.ENV_PYTHON, sys.executable)
    with pytest.raises(SetupError, match=r"cannot run IsaacGym Preview 4 \(it needs 3.6-3.8\)"):
        isaacgym.find_interpreter()


def test_an_explicit_python_must_exist(clean_env: Path) -> None:
    with pytest.raises(SetupError, match="'/nonexistent/python' \\(from python=\\) is not an "
                                         "executable file"):
        isaacgym.find_interpreter("/nonexistent/python")


@pytest.mark.skipif(not PY38, reason="UNISIM_PY38 is not set (make test sets it)")
def test_the_hsgym_conda_env_is_found_and_its_missing_isaacgym_reported(clean_env: Path) -> None:
    env = fake_conda_env(clean_env / "miniconda3", PY38)
    found = list(isaacgym.candidates())
    assert [c.python for c in found] == [str(env / "bin" / "python")]
    assert found[0].env["LD_LIBRARY_PATH"].split(os.pathsep)[0] == str(
        Path(PY38).resolve().parent.parent / "lib")
    with pytest.raises(SetupError) as error:
        isaacgym.find_interpreter()
    text = str(error.value)
    assert "Python 3.8." in text and "isaacgym (ModuleNotFoundError" in text
    assert "conda env hsgym in" in text


def test_conda_envs_of_the_active_conda_are_searched_first(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDA_PREFIX", str(clean_env / "elsewhere" / "envs" / "work"))
    dirs = isaacgym.conda_env_dirs()
    assert dirs[0] == clean_env / "elsewhere" / "envs"
    assert clean_env / "miniconda3" / "envs" in dirs


def test_the_worker_env_puts_the_env_lib_and_the_tarball_on_the_paths(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = clean_env / "hsgym"
    (env / "bin").mkdir(parents=True)
    (env / "lib").mkdir()
    (env / "bin" / "python").write_text("")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/local/cuda/lib64")
    monkeypatch.setenv(isaacgym.ENV_HOME, str(clean_env / "isaacgym"))
    extra = isaacgym.worker_env(str(env / "bin" / "python"))
    assert extra["LD_LIBRARY_PATH"] == f"{env / 'lib'}{os.pathsep}/usr/local/cuda/lib64"
    assert extra["PYTHONPATH"] == str(clean_env / "isaacgym" / "python")


def test_engines_name_their_interpreter_in_their_own_folder() -> None:
    """IsaacGym and the task bridge (a user's IsaacGym task) say in their folders that
    they run on the SDK's interpreter; the host reads it without importing worker code."""
    from unisim.interpreter import ENGINES, HOOKS, declared_interpreter

    declared = {p.name: declared_interpreter(p.name) for p in ENGINES.iterdir()
                if (p / "__init__.py").is_file()}
    assert declared == {"isaacgym": "isaacgym", "task": "isaacgym", "mujoco": None,
                        "mjx": None, "mock": None, "render": None}
    assert set(declared.values()) - {None} <= set(HOOKS)
    assert declared_interpreter("../isaacgym") is None  # a name, never a path
