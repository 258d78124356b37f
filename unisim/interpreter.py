"""Which interpreter runs an engine's worker, and with what extra environment.

The one place of interpreter discovery. A ``Backend``'s default: ``python=``, then
``UNISIM_WORKER_PYTHON``, then this interpreter. An engine whose SDK lives in an interpreter
of its own says which in its folder (``INTERPRETER = "isaacgym"`` in its ``__init__``), and
``HOOKS`` finds that interpreter (IsaacGym: its ``hsgym`` conda env, checked by a probe;
``unisim/isaacgym.py``). The demo and training prefer a Python 3.8 worker, the point of
unisim: ``find_python38``.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from .errors import SetupError
from .process import worker_dir

ENV_VAR = "UNISIM_WORKER_PYTHON"
PY38_VAR = "UNISIM_PY38"
PY38_CHECK = "import sys, mujoco, numpy, msgpack; assert sys.version_info[:2] == (3, 8)"


def resolve_python(python: str | Path | None) -> str:
    """Absolute path of the worker interpreter; ``SetupError`` if it cannot be run."""
    source = "python="
    if python is None:
        python = os.environ.get(ENV_VAR) or None
        source = ENV_VAR
    if python is None:
        return sys.executable
    text = str(python)
    found = shutil.which(text) if os.sep not in text else text
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise SetupError(
            f"worker interpreter {text!r} (from {source}) is not an executable file",
            hint="pass python= the path of a Python >= 3.8 that has numpy, msgpack and the "
                 f"engine's SDK, or unset {ENV_VAR} to use this interpreter")
    return os.path.abspath(found)


Found = tuple[str, dict[str, str]]  # interpreter, extra environment of the worker


def _isaacgym(python: str | Path | None) -> Found:
    from .isaacgym import find_interpreter  # its probe runs only for this engine

    found = find_interpreter(python)
    return found.python, found.env


# How to find each interpreter an engine folder may name (``declared_interpreter``).
HOOKS: dict[str, Callable[[str | Path | None], Found]] = {"isaacgym": _isaacgym}
ENGINES = worker_dir() / "engines"


def declared_interpreter(engine: str) -> str | None:
    """The interpreter ``engine``'s folder says it needs (its ``INTERPRETER``), or None.

    Read from the source, not imported: the interpreter is chosen before any worker runs,
    and host code never imports worker code. An unknown engine has none; its worker names
    the engines it has.
    """
    path = ENGINES / engine / "__init__.py"
    if not engine.isidentifier() or not path.is_file():
        return None
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "INTERPRETER" for t in node.targets):
            name = ast.literal_eval(node.value)
            if name not in HOOKS:
                raise SetupError(f"engine {engine!r} needs interpreter {name!r}, which this "
                                 f"host cannot find (it knows {', '.join(sorted(HOOKS))})",
                                 hint="a bug in unisim: add a hook to interpreter.HOOKS")
            return str(name)
    return None


def resolve_worker(engine: str, python: str | Path | None) -> Found:
    """Interpreter and extra environment of ``engine``'s worker."""
    name = declared_interpreter(engine)
    return HOOKS[name](python) if name else (resolve_python(python), {})


def python38_candidates() -> list[tuple[str, str]]:
    """``(path, where it came from)`` of each Python 3.8 to try, in order: ``UNISIM_PY38``,
    then a ``.venv38`` (the Makefile builds one) in the current directory or in the source
    checkout unisim runs from."""
    found = []
    if os.environ.get(PY38_VAR):
        found.append((os.environ[PY38_VAR], PY38_VAR))
    checkout = Path(__file__).resolve().parents[1]
    for root in dict.fromkeys([Path.cwd(), checkout]):
        found.append((str(root / ".venv38" / "bin" / "python"), f"{root}/.venv38"))
    return found


def find_python38() -> tuple[str | None, str]:
    """The first candidate that is Python 3.8 with MuJoCo, numpy and msgpack, and a
    sentence saying what was chosen (or why none was: the caller then uses this one)."""
    tried = []
    for path, source in python38_candidates():
        if not os.access(path, os.X_OK):
            tried.append(f"{source}: no such interpreter")
            continue
        check = subprocess.run([path, "-c", PY38_CHECK], capture_output=True, text=True,
                               timeout=60, check=False)
        if check.returncode == 0:
            return path, f"worker on Python 3.8 at {path} (from {source})"
        reason = (check.stderr.strip().splitlines() or ["failed"])[-1]
        tried.append(f"{source}: {reason}")
    return None, (f"no Python 3.8 worker found ({'; '.join(tried)}); the worker runs on this "
                  f"interpreter, {sys.executable} "
                  f"(set {PY38_VAR} or run `make .venv38/.installed`)")
