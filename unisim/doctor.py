"""``python -m unisim doctor``: which worker interpreters and engines this machine has."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from . import isaacgym
from .errors import SetupError
from .interpreter import ENV_VAR

# Run by each worker interpreter: its version and which engine SDKs import there.
_PROBE = r"""
import json, sys
found = {"python": "%d.%d.%d" % sys.version_info[:3]}
for name in ("numpy", "msgpack", "mujoco"):
    try:
        found[name] = getattr(__import__(name), "__version__", "yes")
    except Exception as exc:
        found[name] = "missing (%s)" % type(exc).__name__
print(json.dumps(found))
"""


def probe_worker(python: str) -> str:
    """One line on what ``python`` offers a MuJoCo worker."""
    try:
        result = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True,
                                timeout=60, check=False)
        found = json.loads(result.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        return f"{python}: cannot run it ({exc})"
    return f"{python}: " + ", ".join(f"{key} {value}" for key, value in found.items())


def run_doctor() -> int:
    """Print what was found; exit 0 even when an engine is missing (it is a report)."""
    print("mujoco / mock workers")
    workers = {"this interpreter": sys.executable}
    for variable in (ENV_VAR, "UNISIM_PY38"):
        if os.environ.get(variable):
            workers[f"${variable}"] = os.environ[variable]
    for source, python in workers.items():
        print(f"  [{source}] {probe_worker(python)}")
    print("isaacgym worker")
    try:
        chosen = list(isaacgym.candidates())
    except SetupError as exc:
        print(f"  {exc}")
        return 0
    if not chosen:
        print(f"  {isaacgym.not_found()}\n  to install: {isaacgym.INSTALL}")
    for candidate in chosen:
        print(f"  {isaacgym.probe(candidate).describe()}")
    return 0
