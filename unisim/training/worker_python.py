"""Which interpreter runs the training worker: Python 3.8 where one is set up.

The point of unisim is a simulator on another interpreter, so training prefers a
Python 3.8 worker: ``--python``, else ``UNISIM_PY38``, else a ``.venv38`` (the Makefile
builds one) in the current directory or in the source checkout unisim runs from; else
this interpreter, and the caller says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ENV_VAR = "UNISIM_PY38"
CHECK = "import sys, mujoco, numpy, msgpack; assert sys.version_info[:2] == (3, 8)"


def candidates() -> list[tuple[str, str]]:
    """``(path, where it came from)`` of each Python 3.8 to try, in order."""
    found = []
    if os.environ.get(ENV_VAR):
        found.append((os.environ[ENV_VAR], ENV_VAR))
    checkout = Path(__file__).resolve().parents[2]
    for root in dict.fromkeys([Path.cwd(), checkout]):
        found.append((str(root / ".venv38" / "bin" / "python"), f"{root}/.venv38"))
    return found


def find_python38() -> tuple[str | None, str]:
    """The first candidate that is Python 3.8 with MuJoCo, numpy and msgpack, and a
    sentence saying what was chosen (or why none was)."""
    tried = []
    for path, source in candidates():
        if not os.access(path, os.X_OK):
            tried.append(f"{source}: no such interpreter")
            continue
        check = subprocess.run([path, "-c", CHECK], capture_output=True, text=True,
                               timeout=60, check=False)
        if check.returncode == 0:
            return path, f"worker on Python 3.8 at {path} (from {source})"
        reason = (check.stderr.strip().splitlines() or ["failed"])[-1]
        tried.append(f"{source}: {reason}")
    return None, (f"no Python 3.8 worker found ({'; '.join(tried)}); the worker runs on this "
                  f"interpreter, {sys.executable} (set {ENV_VAR} or run `make .venv38/.installed`)")
