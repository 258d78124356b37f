"""What every ``Gym`` method shares: the call trace, and refusing a destroyed sim.

The trace (``Gym._fake_trace``, and one line per call appended to the file named by
``$ISAACGYM_FAKE_TRACE`` when set) lets a test check the order of calls the SDK's docs
prescribe, also when the fake runs in a worker process.
"""

import functools
import os

from ._errors import FakeError
from ._types import Env, Sim, Viewer

TRACE_ENV = "ISAACGYM_FAKE_TRACE"


def sim_of(handle):
    """The ``SimState`` a Sim, Env or Viewer handle belongs to (None for other values)."""
    if isinstance(handle, Sim):
        return handle._state
    if isinstance(handle, Env):
        return handle.sim
    if isinstance(handle, Viewer):
        return handle._viewer.sim
    return None


def traced(cls):
    """Wrap each public method of ``cls`` (and its bases): record the call, refuse a
    destroyed sim."""
    for name in dir(cls):
        method = getattr(cls, name)
        if not name.startswith("_") and callable(method):
            setattr(cls, name, _wrap(name, method))
    return cls


def _wrap(name, method):
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        for value in list(args) + list(kwargs.values()):
            state = sim_of(value)
            if state is not None and state.destroyed:
                raise FakeError("Gym.%s on a sim after destroy_sim: its handles are freed "
                                "(the SDK would read freed memory); create a new sim" % name)
        self._fake_trace.append(name)
        path = os.environ.get(TRACE_ENV)
        if path:
            with open(path, "a") as handle:
                handle.write(name + "\n")
        return method(self, *args, **kwargs)

    return call


class GymBase:
    def __init__(self, *args, **kwargs):
        self._fake_trace = []

    def __getattr__(self, name):
        raise AttributeError(
            "the IsaacGym SDK fake (unisim.testing) does not implement Gym.%s; the calls it "
            "implements are listed in docs/isaacgym.md (Assumptions of the SDK fake)" % name)
