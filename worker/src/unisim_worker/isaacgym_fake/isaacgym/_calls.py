"""One of MuJoCo's functions over a chunk of envs in one foreign call, without the GIL.

The sim's threads (``_threads``) step envs in parallel while MuJoCo runs, and MuJoCo's
Python bindings give the GIL up and take it back around every call: once per env per
call, each time a hand-over between threads that costs a wake-up, which on a virtual
machine's cores can cost as much as the step itself. So a chunk's ``mj_step`` (and the
kinematics after it) goes through a C loop instead, ``f(model[i], data[i])`` for every env
of the chunk, called through ctypes (which releases the GIL for the whole call). The loop
is the C source below, compiled once by the system's C compiler (``$CC``, else ``cc``)
into the cache folder (``$UNISIM_CACHE_DIR``, else ``~/.cache/unisim``). Where there is no
compiler or no MuJoCo library file to call into, the loop runs in Python: the same calls
in the same order, so the same results, only with a hand-over per env.
"""

import ctypes
import glob
import hashlib
import os
import subprocess
import tempfile

import mujoco
import numpy as np

SOURCE = r"""
#include <stdint.h>
typedef void (*mujoco_function)(const void *model, void *data);
void unisim_each(const uint64_t *functions, int nfunctions, const uint64_t *models,
                 const uint64_t *datas, int count) {
    for (int i = 0; i < count; i++) {
        for (int k = 0; k < nfunctions; k++) {
            ((mujoco_function)(uintptr_t)functions[k])(
                (const void *)(uintptr_t)models[i], (void *)(uintptr_t)datas[i]);
        }
    }
}
"""


class Chunk:
    """Envs whose MuJoCo calls go together: their models' and datas' addresses."""

    def __init__(self, envs):
        self.envs = envs
        self.native = native()
        if self.native is not None:
            self.models = np.array([env.model._address for env in envs], dtype=np.uint64)
            self.datas = np.array([env.data._address for env in envs], dtype=np.uint64)

    def each(self, functions):
        """Each function of ``functions`` (MuJoCo's) called as ``function(model, data)``,
        in turn, for each env in order."""
        if self.native is None:
            for env in self.envs:
                for function in functions:
                    function(env.model, env.data)
            return
        loop, pointers = self.native
        addresses = np.array([pointers[f.__name__] for f in functions], dtype=np.uint64)
        loop(addresses.ctypes.data, len(functions), self.models.ctypes.data,
             self.datas.ctypes.data, len(self.envs))


_loaded = []  # [(loop, {name: address})] or [None], once tried


def native():
    """(the C loop, the MuJoCo functions' addresses by name), or None where unavailable."""
    if not _loaded:
        try:
            _loaded.append(_load())
        except (OSError, subprocess.SubprocessError, AttributeError, IndexError):
            _loaded.append(None)
    return _loaded[0]


def _load():
    library = sorted(glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "libmujoco.so*"))
                     + glob.glob(os.path.join(os.path.dirname(mujoco.__file__),
                                              "libmujoco*.dylib")))[0]
    mujoco_library = ctypes.CDLL(library)  # the one the bindings loaded: the same functions
    pointers = {name: ctypes.cast(getattr(mujoco_library, name), ctypes.c_void_p).value
                for name in ("mj_step", "mj_forward", "mj_kinematics", "mj_comPos",
                             "mj_comVel")}
    loop = ctypes.CDLL(_compiled()).unisim_each
    loop.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                     ctypes.c_int]
    loop.restype = None
    return loop, pointers


def _compiled():
    """The loop's shared library, compiled once per source into the cache folder."""
    folder = os.environ.get("UNISIM_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "unisim")
    os.makedirs(folder, exist_ok=True)
    digest = hashlib.sha256(SOURCE.encode()).hexdigest()[:16]
    target = os.path.join(folder, "isaacgym-fake-each-%s.so" % digest)
    if os.path.exists(target):
        return target
    with tempfile.TemporaryDirectory(dir=folder) as staging:
        source = os.path.join(staging, "each.c")
        with open(source, "w") as handle:
            handle.write(SOURCE)
        built = os.path.join(staging, "each.so")
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-o", built,
                        source], check=True, capture_output=True, timeout=120)
        os.replace(built, target)  # atomic: a concurrent build ends with one complete file
    return target
