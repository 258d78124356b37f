"""unisim: drive a simulator in another process (and another interpreter) as if in-process."""

from . import errors, models
from .backend import Backend
from .errors import (
    BackendDead,
    ProtocolError,
    RemoteError,
    SetupError,
    UnisimError,
    WorkerCrashed,
    WorkerDied,
    WorkerTimeout,
)
from .layout import Layout
from .randomizer import Randomizer
from .render_pool import RenderPool, RenderWorkerDied

__all__ = [
    "Backend", "BackendDead", "Layout", "ProtocolError", "Randomizer", "RemoteError",
    "RenderPool", "RenderWorkerDied", "SetupError", "UnisimError", "WorkerCrashed",
    "WorkerDied", "WorkerTimeout", "errors", "models",
]
