"""Engine adapters the worker can host, imported lazily by name.

Every engine implements the interface documented in ``base.Engine``.
"""

import importlib

ENGINES = {
    "mujoco": "engines.mujoco_engine",
    "mock": "engines.mock_engine",
    "isaacgym": "engines.isaacgym_engine",
    "render": "engines.render_engine",
    "mjx": "engines.mjx_engine",
}


def create(name):
    """A fresh, uninitialised engine called ``name``."""
    if name not in ENGINES:
        raise ValueError(
            "unknown engine %r; this worker has %s" % (name, ", ".join(sorted(ENGINES))))
    return importlib.import_module(ENGINES[name]).ENGINE()
