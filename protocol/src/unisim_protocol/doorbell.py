"""The STEP fast path: sequence counters in shared memory instead of pipe frames, and the
work queue from which workers that share rows claim a STEP's chunks.

Each worker owns one 64-byte line of the arena, sixteen little-endian uint32 words:

    0 REQUEST         host: id of the latest request (bumped last, after its arguments)
    1 REPLY           worker: id of the latest finished request
    2 WORKER_WAITING  worker: 1 while it sleeps on REQUEST
    3 HOST_WAITING    host: 1 while it sleeps on REPLY
    4 COMMAND         host: CMD_STEP, or CMD_PIPE ("a frame waits on the pipe")
    5 SUBSTEPS        host: STEP argument
    6 STATUS          worker: STATUS_OK, or STATUS_PIPE (frames for the request are on the pipe)
    7 REQUEST_NEAR    host: 1 when its next request is near (cleared by the worker)
    8 REPLY_NEAR      worker: 1 when its reply is near (cleared by the host)

A waiter that knows when the answer is due sleeps until shortly before it, then spins for
a short while, then sleeps on a Linux futex on the word, in slices, checking between
slices that its peer is still alive, so an idle side burns no CPU and a dead peer is
noticed within a slice. A side about to answer a sleeping waiter may first mark its
answer near (``Line.near``): the waiter wakes while that side finishes, and spins for
the answer, so its wake-up (on a server's idle core, tenths of a millisecond) overlaps
that work instead of following it. The pipe still carries every other command and
every error. The spin relies on x86-64's ordered stores (see ``SPIN_SAFE``). Python 3.8,
stdlib + numpy.
"""

import ctypes
import os
import platform
import struct
import time

WORD_NAMES = ("REQUEST", "REPLY", "WORKER_WAITING", "HOST_WAITING", "COMMAND", "SUBSTEPS",
              "STATUS", "REQUEST_NEAR", "REPLY_NEAR")
(REQUEST, REPLY, WORKER_WAITING, HOST_WAITING, COMMAND, SUBSTEPS, STATUS, REQUEST_NEAR,
 REPLY_NEAR) = range(len(WORD_NAMES))
WORDS = 16
LINE_BYTES = WORDS * 4
CMD_PIPE, CMD_STEP = 0, 1
STATUS_OK, STATUS_PIPE = 0, 1

MARGIN = 150e-6  # seconds before a forecast answer when a dozing waiter starts to spin
MAX_MARGIN = 1e-3  # the most a waiter spins beyond its base spin
NEAR_SPIN = 2e-3  # the most a waiter spins for an answer marked near, before it sleeps again
# Reads of the word between two yields: a yield is a system call of about half a
# microsecond, during which an answer that lands waits unseen.
_READS_PER_YIELD = range(16)

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
    """One doorbell line over a (16,) uint32 numpy view of shared memory.

    ``words`` is a memoryview of the line (native uint32, little-endian on both futex
    platforms): its items read and write as plain ints, about twice as fast as numpy's.
    """

    def __init__(self, words):
        if words.dtype.str != "<u4" or words.shape != (WORDS,):
            raise ValueError("a doorbell line is 16 little-endian uint32 words")
        if not AVAILABLE:
            raise OSError("the doorbell needs Linux futexes on x86_64 or aarch64")
        self.words = memoryview(words).cast("B").cast("I")  # holds ``words``, and so the mapping
        self._address = words.ctypes.data

    def wake(self, index):
        _libc.syscall(_SYS_FUTEX, ctypes.c_void_p(self._address + 4 * index), _FUTEX_WAKE,
                      1, None, None, 0)

    def _sleep(self, index, expected, seconds):
        spec = _Timespec(int(seconds), int((seconds % 1.0) * 1e9))
        _libc.syscall(_SYS_FUTEX, ctypes.c_void_p(self._address + 4 * index), _FUTEX_WAIT,
                      ctypes.c_uint32(expected), ctypes.byref(spec), None, 0)

    def await_change(self, index, old, flag, spin_seconds, slice_seconds, between_slices,
                     doze_seconds=0.0, near=None):
        """Return the new value of word ``index`` once it differs from ``old``.

        Sleeps on the futex for ``doze_seconds`` first (the peer's answer is not due
        before then: sleeping leaves the cores to the peer's threads, and waking on a timer
        before the answer keeps the wake-up off the critical path), then spins
        ``spin_seconds``, then sleeps in ``slice_seconds`` slices. While asleep, word
        ``flag`` is set so the peer knows to wake it; ``between_slices()`` (which may raise)
        is called after every slice. Word ``near``, when the peer sets it (``Line.near``),
        ends a doze or a sleep: the waiter clears it and spins up to ``NEAR_SPIN``.
        """
        words = self.words
        if doze_seconds > 0:
            end = time.perf_counter() + doze_seconds
            while True:
                left = end - time.perf_counter()
                if left <= 0:
                    break
                value = self._nap(index, old, flag, min(left, slice_seconds), near)
                if value != old:
                    return value
                if near is not None and words[near]:
                    break  # spin from here
                between_slices()
        value = self.spin(index, old, spin_seconds)
        if value != old:
            return value
        while True:
            if near is not None and words[near]:
                words[near] = 0
                value = self.spin(index, old, NEAR_SPIN)
                if value != old:
                    return value
            value = self._nap(index, old, flag, slice_seconds, near)
            if value != old:
                return value
            between_slices()

    def spin(self, index, old, seconds):
        """The value of word ``index`` once it differs from ``old``, or ``old`` after
        spinning ``seconds`` (at once where spinning is unsafe: see ``SPIN_SAFE``)."""
        if not SPIN_SAFE:
            return old
        words = self.words
        end = time.perf_counter() + seconds
        while True:
            for _ in _READS_PER_YIELD:
                value = words[index]
                if value != old:
                    return value
            if time.perf_counter() > end:
                return old
            os.sched_yield()  # a peer waiting for this core gets it

    def _nap(self, index, old, flag, seconds, near=None):
        """Sleep on word ``index`` while it holds ``old`` and word ``near`` (if given) is
        clear (at most ``seconds``); the value of word ``index``."""
        words = self.words
        words[flag] = 1
        value = words[index]
        if value == old and not (near is not None and words[near]):
            self._sleep(index, old, seconds)
            value = words[index]
        words[flag] = 0
        return value

    def ring(self, request_id, command, substeps=1):
        """Host: request ``request_id`` (``CMD_STEP`` with its ``substeps``, or ``CMD_PIPE``),
        its arguments written before REQUEST; wakes the worker if it sleeps."""
        words = self.words
        words[SUBSTEPS] = substeps
        words[COMMAND] = command
        words[REQUEST] = request_id
        if words[WORKER_WAITING]:
            self.wake(REQUEST)

    def near(self, index, near, flag):
        """Mark the answer a peer waits for in word ``index`` near (word ``near``), and wake
        the peer if it sleeps (word ``flag``): it spins for the answer from now on. A mark
        set just as the peer goes to sleep may go unseen (the futex waits on word
        ``index``, which the mark leaves as it is): the peer then sleeps until the answer,
        as if unmarked."""
        words = self.words
        words[near] = 1
        if words[flag]:
            self.wake(index)

    def publish(self, index, value, flag):
        """Set word ``index`` to ``value`` and wake the peer if it sleeps (word ``flag``)."""
        self.words[index] = value
        if self.words[flag]:
            self.wake(index)


class Forecast:
    """When the peer's next answer is due, from the waits seen so far, and so how long a
    waiter dozes on the futex and then spins (``Line.await_change``).

    A wait shorter than the forecast is believed at once (dozing too long costs latency);
    a longer one moves the forecast a fifth of the way (spinning a little long costs only
    CPU). A waiter dozes until ``margin`` before the forecast (a tenth of it, at least
    ``MARGIN``, at most ``MAX_MARGIN``), then spins across twice the margin. ``plan`` is
    worked out when a wait is observed, after the answer, so that reading it costs the next
    wait nothing.

    ``spare_core``: whether the waiter has a core that its peer's threads do not need.
    Without one, a waiter whose answer is not due at once sleeps until the peer wakes it:
    the doze's timer would wake it onto a core the peer's threads are using, and its spin
    would keep that core from them just as they finish the work.
    """

    def __init__(self, spin_seconds, spare_core=True):
        self.spin_seconds = spin_seconds
        self.spare_core = spare_core
        self.expected = 0.0
        self.plan = (0.0, spin_seconds)  # (doze_seconds, spin_seconds) for the next wait

    def observe(self, seconds):
        if seconds < self.expected or self.expected == 0.0:
            self.expected = seconds
        else:
            self.expected += 0.2 * (seconds - self.expected)
        margin = min(max(MARGIN, 0.1 * self.expected), MAX_MARGIN)
        if self.expected <= margin:  # due at once: spin as always
            self.plan = (0.0, self.spin_seconds)
        elif self.spare_core:
            self.plan = (self.expected - margin, self.spin_seconds + 2 * margin)
        else:
            self.plan = (0.0, 0.0)  # sleep until woken


# -- the work queue ------------------------------------------------------------------------
# Workers that share rows (one single-threaded worker per core) take a STEP's chunks from one
# queue, as a thread pool's threads take work until none is left, so no step is as slow as
# its slowest core's fixed share. Before a STEP the host writes one token per chunk into a
# pipe all of them inherit; each worker reads tokens (one ``read`` takes exactly one,
# atomically, from a pipe shared by several readers) and steps that chunk's rows until the
# pipe is empty. Any worker may step any env, so every env's whole state lives in shared
# memory. A dead worker cannot block the others: reads never wait (``O_NONBLOCK``). A token
# is a little-endian uint16 chunk index.

TOKEN = struct.Struct("<H")
# A step's tokens fit PIPE_BUF (4 KiB): one atomic write, which even a pipe shrunk to its
# minimum (a user over fs.pipe-user-pages-soft) takes without blocking.
MAX_CHUNKS = 4096 // TOKEN.size
# The last chunks hold about 1/TAIL of a worker's share: the workers finish a step within
# about that much of each other.
TAIL = 64


def chunk_bounds(num_envs, workers):
    """Where each chunk of a STEP's rows starts, then ``num_envs``: chunks that shrink as
    the step goes on ("factoring", Hummel, Schonberg and Flynn 1992). Each round queues
    ``workers`` chunks that together hold half of the rows left, down to chunks of about
    1/TAIL of a share: few claims for most rows, and a short wait for the last chunk."""
    smallest = max(1, num_envs // (workers * TAIL))
    while True:
        bounds = [0]
        while bounds[-1] < num_envs:
            rows = max(smallest, -(-(num_envs - bounds[-1]) // (2 * workers)))
            for _ in range(workers):
                bounds.append(min(num_envs, bounds[-1] + rows))
                if bounds[-1] == num_envs:
                    break
        if len(bounds) - 1 <= MAX_CHUNKS:
            return bounds
        smallest *= 2


def valid_bounds(bounds, num_envs):
    """Whether ``bounds`` runs from 0 to ``num_envs`` in steps of at least one row, in at
    most ``MAX_CHUNKS`` chunks (what a worker checks before it trusts INIT's plan)."""
    return (1 < len(bounds) <= MAX_CHUNKS + 1 and bounds[0] == 0 and bounds[-1] == num_envs
            and all(isinstance(b, int) for b in bounds)
            and all(lo < hi for lo, hi in zip(bounds, bounds[1:])))


class WorkQueue:
    """The host's end: a pipe whose read end the workers inherit (``fd``)."""

    def __init__(self):
        self.fd, self._write = os.pipe()
        os.set_blocking(self.fd, False)  # shared by every reader: none of them ever waits
        self._tokens = b""

    def plan(self, chunks):
        """Tokens for ``chunks`` chunks, written in order at every fill."""
        self._tokens = b"".join(TOKEN.pack(k) for k in range(chunks))

    def fill(self):
        """Drop what a failed step left, then queue every chunk of the next step."""
        while claim(self.fd) is not None:
            pass
        os.write(self._write, self._tokens)

    def close(self):
        for fd in (self.fd, self._write):
            try:
                os.close(fd)
            except OSError:
                pass


def claim(fd):
    """The next chunk index from the queue ``fd``, or None once it is empty."""
    try:
        token = os.read(fd, TOKEN.size)
    except BlockingIOError:
        return None
    if len(token) != TOKEN.size:  # only a torn queue could give this; fail loudly
        raise RuntimeError("work queue token of %d bytes (expected %d)"
                           % (len(token), TOKEN.size))
    return TOKEN.unpack(token)[0]
