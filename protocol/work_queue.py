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
CHUNKS_PER_WORKER = 16  # a straggler's extra time is at most about 1/16 of a share


def chunk_rows(num_envs, workers):
    """Rows per chunk: about ``CHUNKS_PER_WORKER`` chunks per worker, at least one row."""
    rows = max(1, num_envs // (workers * CHUNKS_PER_WORKER))
    while -(-num_envs // rows) > MAX_CHUNKS:
        rows *= 2
    return rows


class WorkQueue:
    """The host's end: a pipe whose read end the workers inherit (``fd``)."""

    def __init__(self):
        self.fd, self._write = os.pipe()
        os.set_blocking(self.fd, False)  # shared by every reader: none of them ever waits
        self._tokens = b""

    def plan(self, num_envs, rows):
        """Tokens for ``num_envs`` envs in chunks of ``rows`` rows, written at every fill."""
        count = -(-num_envs // rows)
        self._tokens = b"".join(TOKEN.pack(k) for k in range(count))

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
