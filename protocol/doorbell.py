"""The STEP fast path: sequence counters in shared memory instead of pipe frames.

Each worker owns one 64-byte line of the arena, sixteen little-endian uint32 words:

    0 REQUEST         host: id of the latest request (bumped last, after its arguments)
    1 REPLY           worker: id of the latest finished request
    2 WORKER_WAITING  worker: 1 while it sleeps on REQUEST
    3 HOST_WAITING    host: 1 while it sleeps on REPLY
    4 COMMAND         host: CMD_STEP, or CMD_PIPE ("a frame waits on the pipe")
    5 SUBSTEPS        host: STEP argument
    6 STATUS          worker: STATUS_OK, or STATUS_ERROR (an ERROR frame is on the pipe)

A waiter spins for a short while, then sleeps on a Linux futex on the word, in slices,
checking between slices that its peer is still alive, so an idle side burns no CPU and
a dead peer is noticed within a slice. The pipe still carries every other command and
every error. The spin relies on x86-64's ordered stores (see ``SPIN_SAFE``). Python 3.8,
stdlib + numpy.
"""

import ctypes
import os
import platform
import time

WORD_NAMES = ("REQUEST", "REPLY", "WORKER_WAITING", "HOST_WAITING", "COMMAND", "SUBSTEPS",
              "STATUS")
REQUEST, REPLY, WORKER_WAITING, HOST_WAITING, COMMAND, SUBSTEPS, STATUS = range(len(WORD_NAMES))
WORDS = 16
LINE_BYTES = WORDS * 4
CMD_PIPE, CMD_STEP = 0, 1
STATUS_OK, STATUS_ERROR = 0, 1

_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine())
_FUTEX_WAIT, _FUTEX_WAKE = 0, 1
# Without ordered stores a waiter could see a new REQUEST before the arguments written
# ahead of it; there, waiters go straight to the futex, whose syscalls are barriers.
SPIN_SAFE = platform.machine() == "x86_64"
AVAILABLE = _SYS_FUTEX is not None
_libc = ctypes.CDLL(None, use_errno=True)


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class Line:
    """One doorbell line over a (16,) uint32 numpy view of shared memory."""

    def __init__(self, words):
        if words.dtype.str != "<u4" or words.shape != (WORDS,):
            raise ValueError("a doorbell line is 16 little-endian uint32 words")
        if not AVAILABLE:
            raise OSError("the doorbell needs Linux futexes on x86_64 or aarch64")
        self.words = words
        self._address = words.ctypes.data

    def wake(self, index):
        _libc.syscall(_SYS_FUTEX, ctypes.c_void_p(self._address + 4 * index), _FUTEX_WAKE,
                      1, None, None, 0)

    def _sleep(self, index, expected, seconds):
        spec = _Timespec(int(seconds), int((seconds % 1.0) * 1e9))
        _libc.syscall(_SYS_FUTEX, ctypes.c_void_p(self._address + 4 * index), _FUTEX_WAIT,
                      ctypes.c_uint32(expected), ctypes.byref(spec), None, 0)

    def await_change(self, index, old, flag, spin_seconds, slice_seconds, between_slices):
        """Return the new value of word ``index`` once it differs from ``old``.

        Spins ``spin_seconds``, then sleeps on the futex in ``slice_seconds`` slices with
        word ``flag`` set so the peer knows to wake it, calling ``between_slices()`` (which
        may raise) after each slice.
        """
        words = self.words
        if SPIN_SAFE:
            end = time.perf_counter() + spin_seconds
            while True:
                value = words[index]
                if value != old:
                    return int(value)
                if time.perf_counter() > end:
                    break
                os.sched_yield()  # a peer waiting for this core gets it
        while True:
            words[flag] = 1
            value = words[index]
            if value == old:
                self._sleep(index, old, slice_seconds)
                value = words[index]
            words[flag] = 0
            if value != old:
                return int(value)
            between_slices()

    def publish(self, index, value, flag):
        """Set word ``index`` to ``value`` and wake the peer if it sleeps (word ``flag``)."""
        self.words[index] = value
        if self.words[flag]:
            self.wake(index)
