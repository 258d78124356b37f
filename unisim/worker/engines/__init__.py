"""Engine adapters the worker can host, imported lazily by name.

Every engine implements the interface documented in ``base.Engine``.
"""

import importlib
import importlib.util
import os

ENGINES = {
    "mujoco": ".mujoco.engine",
    "mock": ".mock.engine",
    "isaacgym": ".isaacgym.engine",
    "render": ".render.engine",
    "mjx": ".mjx.engine",
}


def create(name):
    """A fresh, uninitialised engine called ``name``."""
    if name not in ENGINES:
        raise ValueError(
            "unknown engine %r; this worker has %s" % (name, ", ".join(sorted(ENGINES))))
    return importlib.import_module(ENGINES[name], __name__).ENGINE()


def _mujoco():
    """MuJoCo's version, and whether it has ``mujoco.batch`` (its own thread pool), found
    without importing it (a HELLO must stay fast)."""
    spec = importlib.util.find_spec("mujoco")
    if spec is None or not spec.origin:
        return {"engine": "MuJoCo (not installed)", "threaded": False}
    folder = os.path.dirname(spec.origin)
    threaded = any(name == "batch" or name.startswith("batch.") for name in os.listdir(folder))
    try:
        from importlib.metadata import version

        release = version("mujoco")
    except Exception:  # a source checkout without metadata: the version is not essential
        release = "unknown"
    # Without the batch, every env's state is a row of one array, so workers can share rows
    # (claimed from a work queue, protocol.work_queue) once that array is in shared memory.
    return {"engine": "MuJoCo %s" % release, "version": release, "threaded": threaded,
            "shares_rows": not threaded}


def capabilities():
    """What the host needs to split the envs among workers, per engine (see unisim.split):
    ``threaded``: the engine steps a batch on threads of its own, so one worker with every
    core beats one worker per core; ``per_device``: one worker per GPU; ``shares_rows``:
    its workers can take a STEP's rows from a shared queue (INIT ``queue``)."""
    mujoco = _mujoco()
    return {
        "mujoco": mujoco,
        "render": mujoco,
        "mjx": {"engine": "MJX", "threaded": True},
        "mock": {"engine": "the mock engine", "threaded": False},
        # the CPU pipeline steps on one thread; the host's hook sets per_device for the GPU one
        "isaacgym": {"engine": "IsaacGym", "threaded": False},
    }
