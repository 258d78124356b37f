"""The engines the worker can host: one folder each, named in ``NAMES``, the one list.

An engine's package declares ``capabilities(options, num_envs)``: what the host needs to
split the envs among workers (``unisim.split``), worked out from the engine's own reading
of its options and without importing its SDK (DESCRIBE must stay fast). Its ``engine``
module holds ``ENGINE``, the adapter (``base.Engine``, or ``base.Renderer``), imported only
when INIT asks for it.
"""

import importlib

NAMES = ("mujoco", "mjx", "isaacgym", "render", "mock", "task")


def package(name):
    """The package of the engine called ``name``."""
    if name not in NAMES:
        raise ValueError("unknown engine %r; this worker has %s" % (name, ", ".join(NAMES)))
    return importlib.import_module("." + name, __name__)


def create(name):
    """A fresh, uninitialised engine called ``name``."""
    package(name)
    return importlib.import_module(".%s.engine" % name, __name__).ENGINE()


def capabilities(name, options, num_envs):
    """What the host needs to split ``num_envs`` envs of engine ``name`` among workers:
    ``threaded``: the engine steps a batch on threads of its own, so one worker with every
    core beats one worker per core; ``per_device``: one worker per GPU; ``shares_rows``:
    its workers can take a STEP's rows from a shared queue (INIT ``queue``)."""
    return package(name).capabilities(options, num_envs)
