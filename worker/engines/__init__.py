"""Engine adapters the worker can host, imported lazily by name.

Every engine implements the interface documented in ``base.Engine``.
"""

import importlib

ENGINES = {
    "mujoco": ".mujoco_engine",
    "mock": ".mock_engine",
    "isaacgym": ".isaacgym_engine",
    "render": ".render_engine",
    "mjx": ".mjx_engine",
}


def create(name):
    """A fresh, uninitialised engine called ``name``."""
    if name not in ENGINES:
        raise ValueError(
            "unknown engine %r; this worker has %s" % (name, ", ".join(sorted(ENGINES))))
    return importlib.import_module(ENGINES[name], __name__).ENGINE()
