"""``python -m unisim doctor``: will it work here?

For each worker interpreter found it starts a real worker, steps the bundled cartpole and
reports the time; then which OpenGL backend renders, the GPUs and whether the CUDA data
plane can start, and the free space in ``/dev/shm``. Every failure comes with the command
that fixes it. Exit status 0 when a MuJoCo worker works on at least one interpreter.
"""

from __future__ import annotations

import contextlib
import ctypes.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator

import numpy as np

from . import isaacgym
from .backend import Backend
from .errors import SetupError, UnisimError
from .interpreter import ENV_VAR, PY38_VAR, python38_candidates

NUM_ENVS = 16
GL_LIBRARIES = {"egl": "EGL", "osmesa": "OSMesa"}
GL_FIX = {"egl": "sudo apt-get install libegl1 (CPU: Mesa's llvmpipe; GPU: the NVIDIA driver)",
          "osmesa": "sudo apt-get install libosmesa6"}
SHM_LOW = 256 * 2**20  # bytes: below this, a few thousand envs' slots may not fit

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


def say(text: str, indent: int = 2) -> None:
    print(" " * indent + text)


def fix(text: str) -> None:
    say(f"fix: {text}", indent=6)


def interpreters() -> dict[str, str]:
    """Worker interpreters to try, by where they were found (deduplicated by path)."""
    found = {"this interpreter": sys.executable}
    for variable in (ENV_VAR, PY38_VAR):
        if os.environ.get(variable):
            found[f"${variable}"] = os.environ[variable]
    for path, source in python38_candidates():
        if os.access(path, os.X_OK):
            found.setdefault(source, path)
    seen: set[str] = set()
    unique = {}
    for source, path in found.items():
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            unique[source] = path
    return unique


def probe(python: str) -> tuple[dict[str, str] | None, str]:
    """What ``python`` offers a MuJoCo worker, and one line saying it."""
    try:
        result = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True,
                                timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"cannot run it ({exc})"
    try:
        found: dict[str, str] = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        said = (result.stderr.strip().splitlines() or ["nothing on stderr"])[-1]
        return None, f"cannot run it (exit status {result.returncode}: {said})"
    return found, ", ".join(f"{key} {value}" for key, value in found.items())


def check_worker(source: str, python: str, steps: int) -> tuple[bool, str]:
    """Start a MuJoCo worker on ``python``, step the cartpole; say how long it took.
    Returns whether it worked, and the interpreter's version."""
    found, line = probe(python)
    say(f"[{source}] {python}")
    say(line, indent=6)
    if found is None:
        fix(f"point {ENV_VAR} or python= at a Python >= 3.8 executable")
        return False, "?"
    missing = [name for name in ("numpy", "msgpack", "mujoco") if found[name].startswith("missing")]
    if missing:
        say(f"FAILED: no {', '.join(missing)} there", indent=6)
        fix(f"{python} -m pip install " + " ".join(
            "'mujoco>=3.2'" if name == "mujoco" else name for name in missing))
        return False, found["python"]
    try:
        started = time.perf_counter()
        with Backend("mujoco", model="cartpole", num_envs=NUM_ENVS, python=python,
                     progress=False) as sim:
            setup = time.perf_counter() - started
            ctrl = np.zeros((NUM_ENVS, sim.layout.nu))
            begun = time.perf_counter()
            for _ in range(steps):
                sim.step(ctrl)
            elapsed = time.perf_counter() - begun
            stepper = sim.layout.stepper
    except UnisimError as exc:
        say(f"FAILED: {type(exc).__name__}: {_first_line(exc)}", indent=6)
        hint = getattr(exc, "hint", None)
        fix(hint or f"{python} -m pip install numpy msgpack 'mujoco>=3.2'")
        return False, found["python"]
    say(f"OK: worker started in {setup:.2f} s; {steps} steps of {NUM_ENVS} cartpoles in "
        f"{elapsed * 1e3:.0f} ms ({elapsed / steps * 1e6:.0f} us/step, {stepper} stepping)",
        indent=6)
    return True, found["python"]


@contextlib.contextmanager
def gl_backend(name: str) -> Iterator[None]:
    """``MUJOCO_GL=name`` for the workers started inside (they inherit our environment)."""
    before = os.environ.get("MUJOCO_GL")
    os.environ["MUJOCO_GL"] = name
    try:
        yield
    finally:
        if before is None:
            del os.environ["MUJOCO_GL"]
        else:
            os.environ["MUJOCO_GL"] = before


def default_gl() -> str | None:
    """The backend a worker picks when ``MUJOCO_GL`` is unset (unisim_worker's rendering)."""
    if "MUJOCO_GL" in os.environ:
        return os.environ["MUJOCO_GL"]
    return next((name for name, library in GL_LIBRARIES.items()
                 if ctypes.util.find_library(library)), None)


def check_rendering() -> None:
    chosen = default_gl()
    say(f"a worker uses MUJOCO_GL={chosen or '(none: physics only)'}"
        + ("" if "MUJOCO_GL" in os.environ else " (the first of egl, osmesa whose library "
                                                 "is found; set MUJOCO_GL to choose)"))
    for name, library in GL_LIBRARIES.items():
        if not ctypes.util.find_library(library):
            say(f"{name:<7} FAILED: lib{library} not found", indent=4)
            fix(GL_FIX[name])
            continue
        try:
            with gl_backend(name), Backend("mujoco", model="cartpole", progress=False) as sim:
                started = time.perf_counter()
                frame = sim.capture(0, width=64, height=48)
                took = time.perf_counter() - started
        except UnisimError as exc:
            say(f"{name:<7} FAILED: {_first_line(exc)}", indent=4)
            fix(GL_FIX[name])
            continue
        lit = "a lit frame" if frame.any() else "a BLACK frame"
        say(f"{name:<7} renders: {lit} of 64x48 in {took * 1e3:.0f} ms"
            + (" <- used" if name == chosen else ""), indent=4)


def check_gpus() -> None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        say("none found (no nvidia-smi): rendering runs on the CPU")
    else:
        listing = subprocess.run([smi, "--query-gpu=index,name,memory.total",
                                  "--format=csv,noheader"], capture_output=True, text=True,
                                 timeout=30, check=False)
        for line in listing.stdout.strip().splitlines() or [listing.stderr.strip()]:
            say(f"GPU {line}")
    from .cuda_ipc import load_driver

    try:
        load_driver(0)
    except SetupError as exc:
        say(f"CUDA data plane: not available ({_first_line(exc)})")
        fix(exc.hint or "install the NVIDIA driver")
        return
    say("CUDA data plane: available (data_plane='cuda', device=0)")


def check_shm() -> None:
    try:
        usage = shutil.disk_usage("/dev/shm")
    except OSError as exc:
        say(f"/dev/shm: FAILED: {exc}")
        fix("mount a tmpfs on /dev/shm (docker: --shm-size=2g)")
        return
    say(f"/dev/shm: {usage.free / 2**30:.1f} GiB free of {usage.total / 2**30:.1f} GiB")
    if usage.free < SHM_LOW:
        fix("free space in /dev/shm, or enlarge it: sudo mount -o remount,size=4G /dev/shm "
            "(docker: --shm-size=4g)")


def run_doctor(steps: int = 200) -> int:
    print("mujoco workers (start a worker, step the bundled cartpole)")
    results = [check_worker(source, python, steps) for source, python in interpreters().items()]
    if not any(ok and version.startswith("3.8.") for ok, version in results):
        say("no Python 3.8 worker found (IsaacGym needs one)")
        fix("make .venv38/.installed (pyenv's 3.8), or set UNISIM_PY38")
    print("rendering (a worker captures a frame on each OpenGL backend)")
    check_rendering()
    print("GPUs")
    check_gpus()
    print("shared memory")
    check_shm()
    print("isaacgym worker")
    try:
        chosen = list(isaacgym.candidates())
    except SetupError as exc:
        say(str(exc))
        chosen = []
    if not chosen:
        say(isaacgym.not_found())
        fix(isaacgym.INSTALL)
    for candidate in chosen:
        say(isaacgym.probe(candidate).describe())
    return 0 if any(ok for ok, _ in results) else 1


def _first_line(exc: BaseException) -> str:
    """The message without the hint that ``SetupError`` appends (printed as the fix)."""
    return str(exc).split("\n  hint:")[0]
