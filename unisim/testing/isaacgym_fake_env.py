"""An interpreter on which ``import isaacgym`` is the test kit's SDK fake.

A worker's environment carries no ``PYTHONPATH``, so the fake is put on the path the way
an installed package is: a venv made from the given Python, whose one ``.pth`` file adds
the base interpreter's own site-packages (numpy, msgpack, MuJoCo, torch) and, first on
``sys.path``, the fake's folder. The venv is cached per base interpreter and fake location
and built in a temporary folder that is renamed into place, so that two test processes
building it at once both end with the same complete venv.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..errors import SetupError
from ..process import worker_dir

FAKE_ROOT = worker_dir() / "isaacgym_fake"  # the folder whose ``isaacgym`` is the fake
CACHE_ENV = "UNISIM_CACHE_DIR"
# What the fake imports, with how to install each on Python 3.8 (the SDK's interpreter);
# torch before mujoco: the other order aborts at exit under MUJOCO_GL=egl (torch 1.13.1).
REQUIRED = {
    "numpy": "pip install 'numpy>=1.20,<1.24'",
    "msgpack": "pip install 'msgpack>=1.0,<2'",
    "torch": "pip install torch==1.13.1  (the version envs/hsgym.yml pins; on Python >= 3.9 "
             "any torch >= 1.13)",
    "mujoco": "pip install 'mujoco>=3.2,<3.3'",
}
PROBE = """
import importlib, json, site, sys
missing, versions = [], {}
for name in %r:
    try:
        versions[name] = getattr(importlib.import_module(name), "__version__", "")
    except Exception as exc:
        missing.append([name, "%%s: %%s" %% (type(exc).__name__, exc)])
print(json.dumps({"version": list(sys.version_info[:2]), "missing": missing,
                  "versions": versions, "site": site.getsitepackages()}))
"""


def isaacgym_fake_python(base_python: str | os.PathLike[str]) -> str:
    """The path of a Python on which ``import isaacgym`` is the SDK fake.

    ``base_python`` is a Python >= 3.8 with numpy (< 1.24 on 3.8, as IsaacGym needs),
    msgpack, MuJoCo >= 3.2 and torch; a missing one is a ``SetupError`` naming it and the
    pip command that installs it. The venv is built once under ``$UNISIM_CACHE_DIR``
    (default ``~/.cache/unisim``) and reused.
    """
    base = Path(os.path.abspath(os.fspath(base_python)))
    if not os.access(base, os.X_OK):
        raise SetupError(f"{base} is not an executable Python",
                         "pass the path of a Python >= 3.8 interpreter")
    probe = _probe(base)
    key = hashlib.sha256(f"{base}\n{FAKE_ROOT}\n{probe['site']}".encode()).hexdigest()[:16]
    target = _cache_dir() / f"isaacgym-fake-{key}"
    python = target / "bin" / "python"
    if python.exists():
        return str(python)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        subprocess.run([str(base), "-m", "venv", "--without-pip", "--clear", str(staging)],
                       check=True, capture_output=True, text=True)
        purelib = subprocess.run(
            [str(staging / "bin" / "python"), "-c",
             "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True).stdout.strip()
        lines = [f"import site; site.addsitedir({path!r})" for path in probe["site"]]
        lines.append(f"import sys; sys.path.insert(0, {str(FAKE_ROOT)!r})")
        Path(purelib, "unisim_isaacgym_fake.pth").write_text("\n".join(lines) + "\n")
        try:
            staging.rename(target)  # atomic; fails if another process got there first
        except OSError:
            if not python.exists():
                raise
    except subprocess.CalledProcessError as exc:
        raise SetupError(f"could not build the IsaacGym fake's venv from {base}: "
                         f"{exc.stderr.strip()}", "check that `python -m venv` works there"
                         ) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return str(python)


def _probe(base: Path) -> dict[str, Any]:
    """The base interpreter's version, site-packages and what it lacks; raise if unfit."""
    result = subprocess.run([str(base), "-c", PROBE % (list(REQUIRED),)], capture_output=True,
                            text=True, check=False, timeout=300)
    if result.returncode != 0:
        raise SetupError(f"{base} did not run: {result.stderr.strip()[-500:]}",
                         "pass the path of a Python >= 3.8 interpreter")
    found: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    if tuple(found["version"]) < (3, 8):
        raise SetupError(f"{base} is Python {'.'.join(map(str, found['version']))}; the "
                         "IsaacGym fake needs Python >= 3.8", "pass a Python 3.8 interpreter")
    if found["missing"]:
        names = ", ".join(name for name, _ in found["missing"])
        hint = "; ".join(f"{base} -m {REQUIRED[name]}" for name, _ in found["missing"])
        raise SetupError(f"{base} lacks {names}, which the IsaacGym fake needs "
                         f"({'; '.join(reason for _, reason in found['missing'])})", hint)
    numpy = found["versions"].get("numpy", "0")
    if tuple(found["version"]) < (3, 9) and _version(numpy) >= (1, 24):
        raise SetupError(f"{base} has numpy {numpy}; IsaacGym on Python 3.8 (and so unisim's "
                         "discovery of its interpreter there) needs numpy < 1.24",
                         f"{base} -m {REQUIRED['numpy']}")
    mujoco = found["versions"].get("mujoco", "0")
    if _version(mujoco) < (3, 2):
        raise SetupError(f"{base} has MuJoCo {mujoco}; the IsaacGym fake needs MuJoCo >= 3.2",
                         f"{base} -m {REQUIRED['mujoco']}")
    return found


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2] if part.isdigit())


def _cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "unisim")
