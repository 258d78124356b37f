"""Attach the host's shared-memory arena by plain ``mmap``.

``multiprocessing.shared_memory`` is deliberately not used: on Python < 3.13 it
registers the segment with this process's resource tracker, which would unlink the
host's memory when the worker exits. The host owns, declares and unlinks the arena.
"""

import mmap
import os

import numpy as np

SHM_DIR = "/dev/shm"


def attach_arena(declaration):
    """Map the arena, by name or by an fd inherited from the host; ``{slot: view}``."""
    size = int(declaration["size"])
    if "fd" in declaration:
        fd = int(declaration["fd"])
        name = "fd %d" % fd
    else:
        name = declaration["name"]
        if "/" in name or name.startswith("."):
            raise ValueError("invalid shared-memory name %r" % name)
        fd = os.open(os.path.join(SHM_DIR, name), os.O_RDWR)
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
