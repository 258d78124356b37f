"""Which interpreter runs an engine's worker, and with what extra environment.

The default: ``python=``, then ``UNISIM_WORKER_PYTHON``, then this interpreter. An engine
whose SDK lives in an interpreter of its own registers a hook in ``HOOKS`` (IsaacGym: its
``hsgym`` conda env, checked by a probe; ``unisim/isaacgym.py``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from .errors import SetupError

ENV_VAR = "UNISIM_WORKER_PYTHON"


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


HOOKS: dict[str, Callable[[str | Path | None], Found]] = {"isaacgym": _isaacgym}


def resolve_worker(engine: str, python: str | Path | None) -> Found:
    """Interpreter and extra environment of ``engine``'s worker."""
    hook = HOOKS.get(engine)
    return hook(python) if hook else (resolve_python(python), {})
