"""Length-prefixed frames on a pair of file descriptors.

A frame is a 12-byte header followed by an opaque body::

    magic  b"USIM"   4 bytes
    version          uint16, little-endian
    flags            uint16, little-endian, zero (reserved)
    length           uint32, little-endian, body bytes, at most MAX_FRAME

This module knows nothing of commands or encodings (see ``messages`` and
``codec``). Python 3.8, stdlib only: the worker loads it by file path.
"""

import os
import select
import struct
import time

MAGIC = b"USIM"
VERSION = 1
HEADER = struct.Struct("<4sHHI")
MAX_FRAME = 64 * 1024 * 1024
_READ_CHUNK = 4096  # one read usually holds a whole small frame; larger reads cost allocation


class FrameError(Exception):
    """The byte stream is not a valid frame sequence; it cannot be resynchronised."""


class StreamClosed(EOFError):
    """The peer closed the stream cleanly, between two frames."""


def header(length, version=VERSION):
    """Header bytes for a body of ``length`` bytes."""
    return HEADER.pack(MAGIC, version, 0, length)


class FrameWriter:
    """Writes whole frames; loops over short writes (a signal can interrupt a pipe write).

    ``written`` counts the bytes written so far: a worker that answers outside the pipe
    tells the host from it whether anything for that request is on the pipe.
    """

    def __init__(self, fd, max_frame=MAX_FRAME):
        self.fd = fd
        self.max_frame = max_frame
        self.written = 0

    def write(self, body):
        n = len(body)
        if n > self.max_frame:
            raise FrameError(
                "frame body of %d bytes exceeds the %d-byte limit; large data belongs "
                "in shared-memory slots, not on the pipe" % (n, self.max_frame)
            )
        if n <= 65536:  # one syscall for the common small frame
            frame = header(n) + body
            written = os.write(self.fd, frame)
            self.written += written
            if written < len(frame):
                self.write_raw(memoryview(frame)[written:])
        else:
            self.write_raw(memoryview(header(n)))
            self.write_raw(memoryview(body))

    def write_raw(self, data):
        """Write the bytes ``data`` whole, as they are (a frame's parts, or a test's
        garbage)."""
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            self.written += written
            view = view[written:]


class FrameReader:
    """Reads whole frames; validates each header before it reads (or allocates) a body.

    After a ``FrameError`` the stream is out of sync and the reader refuses further use.
    """

    def __init__(self, fd, max_frame=MAX_FRAME):
        self.fd = fd
        self.max_frame = max_frame
        self._buf = bytearray()
        self._broken = None
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def read(self):
        """Return the next frame body; raise ``StreamClosed`` on EOF between frames."""
        if self._broken is not None:
            raise FrameError("stream already failed: %s" % self._broken)
        try:
            if not self._buf:  # the common case: one read returns exactly one whole frame
                chunk = os.read(self.fd, _READ_CHUNK)
                if not chunk:
                    raise StreamClosed("peer closed the stream")
                if len(chunk) >= HEADER.size and \
                        len(chunk) == HEADER.size + self._body_length(chunk):
                    return chunk[HEADER.size:]
                self._buf += chunk
            if not self._fill(HEADER.size, at_boundary=True):
                raise StreamClosed("peer closed the stream")
            end = HEADER.size + self._body_length(self._buf)
            self._fill(end, at_boundary=False)
            body = bytes(self._buf[HEADER.size:end])
            del self._buf[:end]
            return body
        except FrameError as exc:
            self._broken = str(exc)
            raise

    def _body_length(self, data):
        """The body length announced by the header at the start of ``data``, validated."""
        magic, version, _flags, length = HEADER.unpack_from(data)
        if magic != MAGIC:
            raise FrameError(
                "bad magic %r (expected %r): the stream is corrupt, most likely "
                "something other than the protocol wrote to it; first bytes: %r"
                % (bytes(magic), MAGIC, bytes(data[:32]))
            )
        if version != VERSION:
            raise FrameError(
                "frame has protocol version %d, this side speaks version %d; "
                "install matching unisim versions on both sides" % (version, VERSION)
            )
        if length > self.max_frame:
            raise FrameError(
                "frame announces %d body bytes, over the %d-byte limit"
                % (length, self.max_frame)
            )
        return length

    def ready(self, spin=0.0):
        """Whether input waits (bytes of a next frame read already, or the stream readable
        or closed), polling for up to ``spin`` seconds and yielding the core between polls.

        A frame that comes within the spin is then taken by a ``read`` that does not block:
        the reader is not put to sleep and woken, which is most of a pipe round trip.
        """
        if self._buf:
            return True
        poll = self._poll.poll
        if poll(0):
            return True
        clock = time.perf_counter
        end = clock() + spin
        while clock() < end:
            os.sched_yield()  # a peer waiting for this core gets it
            if poll(0):
                return True
        return False

    def _fill(self, size, at_boundary):
        """Read until the buffer holds ``size`` bytes; False on a clean EOF at a boundary."""
        while len(self._buf) < size:
            chunk = os.read(self.fd, max(_READ_CHUNK, size - len(self._buf)))
            if not chunk:
                if at_boundary and not self._buf:
                    return False
                raise FrameError(
                    "stream ended inside a frame: expected %d bytes, got %d"
                    % (size, len(self._buf))
                )
            self._buf += chunk
        return True
