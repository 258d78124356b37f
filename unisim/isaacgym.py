"""Finding a Python that can run the IsaacGym worker.

IsaacGym Preview 4 runs only on Python 3.6-3.8, so its worker lives in another
interpreter, normally the ``hsgym`` conda env of ``envs/hsgym.yml``. Candidates, in
order: ``python=``, ``$UNISIM_ISAACGYM_PYTHON``, then ``hsgym`` under the conda installs
users commonly have. Each is probed in a subprocess (version, ``from isaacgym import
gymapi``, numpy, msgpack; the test kit's SDK fake passes on any Python >= 3.8); the first
that passes wins, otherwise ``SetupError`` lists
what each candidate lacked and how to install it. ``$UNISIM_ISAACGYM_HOME`` names an
unpacked IsaacGym tarball whose ``python/`` is put on the worker's path when the
package is not pip-installed in the env.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import SetupError

ENV_PYTHON = "UNISIM_ISAACGYM_PYTHON"
ENV_HOME = "UNISIM_ISAACGYM_HOME"
CONDA_ENV = "hsgym"
CONDA_ROOTS = ("~/miniconda3", "~/anaconda3", "~/miniforge3", "~/mambaforge", "~/micromamba",
               "/opt/conda", "/opt/miniconda3", "/opt/anaconda3")
PROBE_TIMEOUT = 120.0  # importing gymapi loads large native libraries
INSTALL = ("create the env and install IsaacGym into it (docs/isaacgym.md): "
           "conda env create -f envs/hsgym.yml && conda run -n hsgym pip install -e "
           "<isaacgym>/python, or point UNISIM_ISAACGYM_PYTHON (or python=) at a Python 3.8 "
           "that has isaacgym, numpy<1.24 and msgpack")

# Run by the candidate interpreter; Python 3.6-compatible on purpose, to report even there.
# The test kit's SDK fake (``isaacgym.FAKE``) runs on any Python >= 3.8 and numpy.
_PROBE = r"""
import json, sys
report = {"version": "%d.%d.%d" % sys.version_info[:3], "missing": [], "fake": False}
for module in ("numpy", "msgpack"):
    try:
        __import__(module)
    except Exception as exc:
        report["missing"].append("%s (%s)" % (module, exc))
try:
    import isaacgym
    from isaacgym import gymapi
    report["isaacgym"] = getattr(gymapi, "__file__", "")
    report["fake"] = bool(getattr(isaacgym, "FAKE", False))
except Exception as exc:
    report["missing"].append("isaacgym (%s: %s)" % (type(exc).__name__, exc))
if not report["fake"]:
    try:
        import numpy
        if tuple(int(p) for p in numpy.__version__.split(".")[:2]) >= (1, 24):
            report["missing"].append("numpy<1.24 (IsaacGym uses np.float; found %s)"
                                     % numpy.__version__)
    except Exception:
        pass
print(json.dumps(report))
"""


@dataclass(frozen=True)
class Candidate:
    """An interpreter that might run the worker, and where it came from."""

    python: str
    source: str
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Probe:
    """What a candidate lacks (nothing when ``ok``)."""

    candidate: Candidate
    version: str
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def describe(self) -> str:
        state = "ok" if self.ok else "; ".join(self.problems)
        return f"{self.candidate.python} ({self.candidate.source}, Python {self.version}): {state}"


def conda_env_dirs() -> list[Path]:
    """Directories that may hold conda envs, most specific first."""
    dirs: list[Path] = []
    for variable in ("CONDA_ENVS_PATH", "CONDA_ENVS_DIRS"):
        dirs += [Path(p) for p in os.environ.get(variable, "").split(os.pathsep) if p]
    prefix = os.environ.get("CONDA_PREFIX")
    if prefix:  # an active env lives in <root>/envs/<name>; an active base is <root>
        dirs += [Path(prefix).parent, Path(prefix) / "envs"]
    conda = os.environ.get("CONDA_EXE")
    if conda:
        dirs.append(Path(conda).resolve().parent.parent / "envs")
    dirs += [Path(root).expanduser() / "envs" for root in CONDA_ROOTS]
    dirs.append(Path("~/.conda/envs").expanduser())
    unique: list[Path] = []
    for directory in dirs:
        if directory not in unique:
            unique.append(directory)
    return unique


def worker_env(python: str) -> dict[str, str]:
    """Extra environment for the worker: the env's lib on the loader path, the tarball."""
    env: dict[str, str] = {}
    lib = Path(python).resolve().parent.parent / "lib"
    if lib.is_dir():  # gymapi's native module needs the env's libpython3.8.so
        old = os.environ.get("LD_LIBRARY_PATH", "")
        env["LD_LIBRARY_PATH"] = f"{lib}{os.pathsep}{old}" if old else str(lib)
    home = os.environ.get(ENV_HOME)
    if home:
        env["PYTHONPATH"] = str(Path(home).expanduser() / "python")
    return env


def candidates(python: str | Path | None = None) -> Iterator[Candidate]:
    """Interpreters to try, in order; an explicit choice is the only candidate."""
    if python is not None:
        yield _candidate(str(python), "python=")
        return
    chosen = os.environ.get(ENV_PYTHON)
    if chosen:
        yield _candidate(chosen, ENV_PYTHON)
        return
    for directory in conda_env_dirs():
        path = directory / CONDA_ENV / "bin" / "python"
        if path.exists():
            yield _candidate(str(path), f"conda env {CONDA_ENV} in {directory}")


def _candidate(python: str, source: str) -> Candidate:
    path = Path(python).expanduser()
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise SetupError(f"IsaacGym worker interpreter {python!r} (from {source}) is not an "
                         "executable file", hint=INSTALL)
    return Candidate(str(path.absolute()), source, worker_env(str(path)))


@functools.lru_cache(maxsize=16)
def _run_probe(python: str, env_items: tuple[tuple[str, str], ...]) -> tuple[str, tuple[str, ...]]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(env_items)
    try:
        result = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, env=env,
                                timeout=PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "?", (f"could not run it: {exc}",)
    try:
        report = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        return "?", (f"the probe failed with exit code {result.returncode}: {tail[0]}",)
    version = str(report["version"])
    problems = [str(p) for p in report["missing"]]
    if not report.get("fake") and not version.startswith(("3.6.", "3.7.", "3.8.")):
        problems.insert(0, f"Python {version} cannot run IsaacGym Preview 4 (it needs 3.6-3.8)")
    return version, tuple(problems)


def probe(candidate: Candidate) -> Probe:
    """Check a candidate in a subprocess (cached per interpreter and environment)."""
    version, problems = _run_probe(candidate.python, tuple(sorted(candidate.env.items())))
    return Probe(candidate, version, problems)


def not_found() -> str:
    """Why no candidate exists at all: what was looked at."""
    searched = ", ".join(str(d / CONDA_ENV) for d in conda_env_dirs())
    return (f"no IsaacGym interpreter found: python= not given, {ENV_PYTHON} not set, and no "
            f"conda env {CONDA_ENV!r} in {searched}")


def find_interpreter(python: str | Path | None = None) -> Candidate:
    """The first candidate that can run the IsaacGym worker, or ``SetupError`` saying why."""
    probes = [probe(candidate) for candidate in candidates(python)]
    for result in probes:
        if result.ok:
            return result.candidate
    if not probes:
        raise SetupError(not_found(), hint=INSTALL)
    raise SetupError("no interpreter can run the IsaacGym worker:\n  "
                     + "\n  ".join(p.describe() for p in probes), hint=INSTALL)
