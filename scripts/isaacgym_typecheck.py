"""Type-check the IsaacGym adapter against the published gymapi signatures.

Builds ``.typings/isaacgym/`` from the installed ``isaacgym-stubs`` (renaming its two
``lambda`` properties, which are not valid Python, and adding our small gymtorch stub),
then runs mypy for Python 3.8 over the given worker modules. Run with the interpreter
of the tools venv that has ``mypy==1.16.*`` and ``isaacgym-stubs`` (``make lint``)::

    .venv-typecheck/bin/python scripts/isaacgym_typecheck.py [worker module files...]

Exit status: mypy's (0 when clean).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "worker"
TYPINGS = ROOT / "typings"
GENERATED = ROOT / ".typings"
ADAPTER = ("engines/isaacgym_engine.py", "engines/isaacgym_sim.py", "engines/isaacgym_io.py",
           "engines/isaacgym_mapping.py", "engines/isaacgym_options.py",
           "engines/isaacgym_kinematics.py", "engines/mjcf_scan.py",
           "cuda_ipc.py")
PY38 = ROOT / ".venv38" / "bin" / "python"


def build_stubs() -> Path:
    """``.typings/isaacgym`` from isaacgym-stubs, parseable, with our gymtorch stub."""
    source = Path(sysconfig.get_paths()["purelib"]) / "isaacgym-stubs"
    if not (source / "gymapi.pyi").is_file():
        sys.exit(f"isaacgym-stubs is not installed for {sys.executable}: "
                 "pip install --pre 'isaacgym-stubs==1.1rc4'")
    target = GENERATED / "isaacgym"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    text = (source / "gymapi.pyi").read_text()
    renamed, count = re.subn(r"\bdef lambda\(", "def lambda_(", text)
    if count != 2:
        sys.exit(f"expected 2 'lambda' properties in isaacgym-stubs' gymapi.pyi, found {count}: "
                 "the stubs changed; update this script")
    (target / "gymapi.pyi").write_text(renamed)
    (target / "__init__.pyi").write_text("from . import gymapi as gymapi\n")
    shutil.copy(TYPINGS / "isaacgym" / "gymtorch.pyi", target / "gymtorch.pyi")
    return GENERATED


def main(argv: list[str]) -> int:
    stubs = build_stubs()
    files = argv or [str(WORKER / name) for name in ADAPTER]
    command = [sys.executable, "-m", "mypy", "--config-file", str(TYPINGS / "mypy-isaacgym.ini"),
               "--cache-dir", str(GENERATED / "mypy-cache"), "--explicit-package-bases"]
    if PY38.exists():  # numpy's own stubs as the worker sees them (numpy 1.24, Python 3.8)
        command += ["--python-executable", str(PY38)]
    else:
        command += ["--no-site-packages", "--ignore-missing-imports"]
    env = {"MYPYPATH": f"{stubs}{':'}{WORKER}", "PATH": "/usr/bin:/bin"}
    return subprocess.call(command + files, cwd=WORKER, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
