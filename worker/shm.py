"""Attach the host's shared-memory arena by plain ``mmap``.

``multiprocessing.shared_memory`` is deliberately not used: on Python < 3.13 it
registers the segment with this process's resource tracker, which would unlink the
host's memory when the worker exits. The host owns, declares and unlinks the arena.
"""

import mmap
import os
import re

import numpy as np

SHM_DIR = "/dev/shm"
_PROC_FD = re.compile(r"^/proc/[0-9]+/fd/[0-9]+$")  # a segment the host holds open (``path``)


def attach_arena(declaration):
    """Map the arena and return ``{slot name: ndarray view}``.

    The arena is opened by ``name`` in /dev/shm, or by ``path`` when the host declares
    one: its own open descriptor, for a segment whose name is already unlinked."""
    name = declaration["name"]
    if "/" in name or name.startswith("."):
        raise ValueError("invalid shared-memory name %r" % name)
    path = declaration.get("path") or os.path.join(SHM_DIR, name)
    if not (path == os.path.join(SHM_DIR, name) or _PROC_FD.match(path)):
        raise ValueError("invalid shared-memory path %r" % path)
    size = int(declaration["size"])
    fd = os.open(path, os.O_RDWR)
    try:
        actual = os.fstat(fd).st_size
        if actual < size:
            raise ValueError("arena %s holds %d bytes, the host declared %d" % (name, actual, size))
        buffer = mmap.mmap(fd, size)
    finally:
        os.close(fd)
    views = {}
    for slot in declaration["slots"]:
        dtype = np.dtype(slot["dtype"])
        shape = tuple(slot["shape"])
        offset = int(slot["offset"])
        count = int(np.prod(shape))
        if offset < 0 or offset + count * dtype.itemsize > size:
            raise ValueError("slot %s lies outside the arena" % slot["name"])
        views[slot["name"]] = np.frombuffer(buffer, dtype=dtype, count=count,
                                            offset=offset).reshape(shape)
    return views


class ArenaCache:
    """Arenas declared inside requests (an image slot, a backend's state arena), mapped
    on first sight and kept by name, so a request costs no mapping after the first. At
    most ``keep`` stay mapped (the oldest is dropped)."""

    def __init__(self, keep):
        self.keep = keep
        self._views = {}

    def views(self, declaration):
        name = declaration["name"]
        if name not in self._views:
            while len(self._views) >= self.keep:
                del self._views[next(iter(self._views))]
            self._views[name] = attach_arena(declaration)
        return self._views[name]
