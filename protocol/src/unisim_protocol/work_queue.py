"""The STEP work queue: chunks of env rows, claimed by whichever worker is free.

With one single-threaded worker per core, a fixed share of rows per worker makes every
step as slow as the slowest core (a core shared with the host, a busy neighbour); a thread
pool does not pay that, because its threads take work until none is left. Workers that
share the queue do the same: before a STEP the host writes one token per chunk into a
pipe all of them inherit, and each worker reads tokens (one ``read`` takes exactly one,
atomically, from a pipe shared by several readers) and steps that chunk's rows, until the
pipe is empty. Any worker may step any env, so every env's whole state lives in shared
memory. A dead worker cannot block the others: reads never wait (``O_NONBLOCK``).

A token is a little-endian uint16 chunk index. Python 3.8, stdlib only.
"""

import os
import struct

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
