"""Type-check the IsaacGym adapter against the published gymapi signatures.

Builds ``isaacgym/`` stubs from the installed ``isaacgym-stubs`` (renaming its two
``lambda`` properties, which are not valid Python, and adding our small gymtorch stub) in a
folder of its own for each run, since the test suite's parallel runs must not rebuild each
other's, then runs mypy for Python 3.8 over the given worker modules. Run with the interpreter
of the tools venv that has ``mypy==1.16.*`` and ``isaacgym-stubs`` (``make lint``)::

    .venv-typecheck/bin/python tools/typecheck/isaacgym_typecheck.py [--worker DIR] [files...]

Exit status: mypy's (0 when clean).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TYPINGS = Path(__file__).resolve().parent / "typings"
WORKER = ROOT / "worker" / "src" / "unisim_worker"
CORE = ROOT / "protocol" / "src" / "unisim_protocol"
ADAPTER = (*sorted((WORKER / "engines" / "isaacgym").glob("*.py")),
           WORKER / "engines" / "mjcf_scan.py", CORE / "cuda_driver.py", CORE / "cuda_arena.py")
PY38 = ROOT / ".venv38" / "bin" / "python"


def build_stubs(generated: Path) -> Path:
    """``generated/isaacgym`` from isaacgym-stubs, parseable, with our gymtorch stub."""
    source = Path(sysconfig.get_paths()["purelib"]) / "isaacgym-stubs"
    if not (source / "gymapi.pyi").is_file():
        sys.exit(f"isaacgym-stubs is not installed for {sys.executable}: "
                 "pip install --pre 'isaacgym-stubs==1.1rc4'")
    target = generated / "isaacgym"
    target.mkdir(parents=True)
    text = (source / "gymapi.pyi").read_text()
    renamed, count = re.subn(r"\bdef lambda\(", "def lambda_(", text)
    if count != 2:
        sys.exit(f"expected 2 'lambda' properties in isaacgym-stubs' gymapi.pyi, found {count}: "
                 "the stubs changed; update this script")
    (target / "gymapi.pyi").write_text(renamed)
    (target / "__init__.pyi").write_text("from . import gymapi as gymapi\n")
    shutil.copy(TYPINGS / "isaacgym" / "gymtorch.pyi", target / "gymtorch.pyi")
    return generated


def build_packages(worker: Path, generated: Path) -> Path:
    """``unisim_worker`` and ``unisim_protocol`` as links to the source folders (``worker``
    may be a copy), so relative and core imports resolve."""
    packages = generated / "packages"
    packages.mkdir(parents=True)
    (packages / "unisim_worker").symlink_to(worker)
    (packages / "unisim_protocol").symlink_to(CORE)
    return packages


def targets(paths: list[Path], worker: Path) -> list[str]:
    """mypy arguments: ``-m unisim_worker.x`` for a file of the worker or the core (so its
    relative imports resolve), the path itself for any other file."""
    found = []
    for path in paths:
        for package, folder in (("unisim_worker", worker), ("unisim_protocol", CORE)):
            if path.resolve().is_relative_to(folder.resolve()):
                parts = path.resolve().relative_to(folder.resolve()).with_suffix("").parts
                parts = parts[:-1] if parts[-1] == "__init__" else parts
                found += ["-m", ".".join((package, *parts))]
                break
        else:
            found.append(str(path.resolve()))
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", type=Path, default=WORKER,
                        help="the worker package's folder (a copy, to test the gate)")
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="isaacgym-typecheck-") as folder:
        return typecheck(Path(folder), args.worker.resolve(), args.files or list(ADAPTER))


def typecheck(generated: Path, worker: Path, files: list[Path]) -> int:
    """mypy's exit status over ``files``, with the stubs and packages built in ``generated``."""
    stubs = build_stubs(generated)
    packages = build_packages(worker, generated)
    modules = targets(files, worker)
    command = [sys.executable, "-m", "mypy", "--config-file", str(TYPINGS / "mypy-isaacgym.ini"),
               "--cache-dir", str(generated / "mypy-cache"), "--explicit-package-bases"]
    if PY38.exists():  # numpy's own stubs as the worker sees them (numpy 1.24, Python 3.8)
        command += ["--python-executable", str(PY38)]
    else:
        command += ["--no-site-packages", "--ignore-missing-imports"]
    env = {"MYPYPATH": f"{stubs}:{packages}", "PATH": "/usr/bin:/bin"}
    return subprocess.call(command + modules, cwd=packages, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
