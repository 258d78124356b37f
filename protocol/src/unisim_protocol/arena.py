"""The shared-memory arena: where each slot lies, the declaration, mapping a declared arena.

One arena holds every slot of a backend (or render pool) at an aligned offset, after
``lines`` 64-byte doorbell lines. The host creates the segment and declares it (name,
size, slots with dtype, shape and offset); a worker maps it by plain ``mmap``.
``multiprocessing.shared_memory`` is deliberately not used: on Python < 3.13 it
registers the segment with this process's resource tracker, which would unlink the
host's memory when the worker exits. Python 3.8, stdlib and numpy.
"""

import mmap
import os
import re

import numpy as np

from . import doorbell

SHM_DIR = "/dev/shm"
PREFIX = "unisim-"
ALIGN = 64  # a cache line: rows of different slots never share one
_PROC_FD = re.compile(r"^/proc/[0-9]+/fd/[0-9]+$")  # a segment the host holds open (``path``)


def row_bytes(slot):
    """Bytes of one row of ``slot`` (anything with ``dtype`` and per-row ``shape``)."""
    return int(np.prod(slot.shape, dtype=np.int64)) * np.dtype(slot.dtype).itemsize


def offsets(slots, rows, align=ALIGN, start=0):
    """``({name: offset}, size)`` of ``rows`` rows of each slot, each ``align``-aligned."""
    found = {}
    size = start
    for slot in slots:
        found[slot.name] = size
        size += -(-rows * row_bytes(slot) // align) * align
    return found, max(size, align)


def declaration(name, size, slots, where, rows, line=None, path=None):
    """What a worker needs to map ``rows`` (a range) of every slot, and doorbell ``line``.

    ``where`` is ``offsets``'s map; ``path`` a descriptor path for an unlinked segment.
    """
    declared = [
        {"name": s.name, "dtype": s.dtype, "shape": [len(rows), *s.shape],
         "offset": where[s.name] + rows.start * row_bytes(s)}
        for s in slots
    ]
    if line is not None:
        declared.append({"name": "doorbell", "dtype": "<u4", "shape": [doorbell.WORDS],
                         "offset": line * doorbell.LINE_BYTES})
    result = {"name": name, "size": size, "slots": declared}
    if path is not None:
        result["path"] = path
    return result


def attach(declared):
    """Map the arena and return ``{slot name: ndarray view}``.

    The arena is opened by ``name`` in /dev/shm, or by ``path`` when the host declares
    one: its own open descriptor, for a segment whose name is already unlinked."""
    name = declared["name"]
    if "/" in name or name.startswith("."):
        raise ValueError("invalid shared-memory name %r" % name)
    path = declared.get("path") or os.path.join(SHM_DIR, name)
    if not (path == os.path.join(SHM_DIR, name) or _PROC_FD.match(path)):
        raise ValueError("invalid shared-memory path %r" % path)
    size = int(declared["size"])
    fd = os.open(path, os.O_RDWR)
    try:
        actual = os.fstat(fd).st_size
        if actual < size:
            raise ValueError("arena %s holds %d bytes, the host declared %d" % (name, actual, size))
        buffer = mmap.mmap(fd, size)
    finally:
        os.close(fd)
    views = {}
    for slot in declared["slots"]:
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

    def views(self, declared):
        name = declared["name"]
        if name not in self._views:
            while len(self._views) >= self.keep:
                del self._views[next(iter(self._views))]
            self._views[name] = attach(declared)
        return self._views[name]
