"""Framing and codec on real pipes: exact, strict, and bounded."""

from __future__ import annotations

import itertools
import os
import pickle
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

import unisim_protocol as protocol
from unisim_protocol import framing


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        try:
            os.close(fd)
        except OSError:
            pass


def test_round_trip_of_every_wire_type(pipe: tuple[int, int]) -> None:
    r, w = pipe
    payload = {"none": None, "b": True, "i": -(2**63), "u": 2**64 - 1, "f": 1.5, "s": "é",
               "bytes": b"\x00\xff", "list": [1, [2, {"x": 3}]],
               "arr": np.arange(6.0).reshape(2, 3), "np_int": np.int32(4)}
    protocol.FrameWriter(w).write(protocol.pack(protocol.Kind.REQUEST, 9, protocol.Command.STEP,
                                                payload))
    kind, rid, command, got = protocol.unpack(protocol.FrameReader(r).read())
    assert (kind, rid, command) == (protocol.Kind.REQUEST, 9, protocol.Command.STEP)
    assert np.array_equal(got.pop("arr"), payload.pop("arr"))
    assert got == {**payload, "np_int": 4}


def test_header_bytes_are_as_specified() -> None:
    assert framing.header(5) == b"USIM\x01\x00\x00\x00\x05\x00\x00\x00"
    body = protocol.pack(protocol.Kind.REQUEST, 1, protocol.Command.PING, {})
    assert body == b"\x94\x02\x01\x06\x80"


@pytest.mark.parametrize(("raw", "message"), [
    (b"GARBAGE-----", "bad magic"),
    (framing.header(4, version=99) + b"abcd", "protocol version 99"),
    (framing.HEADER.pack(b"USIM", 1, 0, 2**32 - 1), "over the"),
    (framing.header(10) + b"short", "stream ended inside a frame"),
    (b"USIM\x01", "stream ended inside a frame"),
])
def test_bad_streams_fail_clearly_without_allocating(pipe: tuple[int, int], raw: bytes,
                                                     message: str) -> None:
    r, w = pipe
    os.write(w, raw)
    os.close(w)
    reader = protocol.FrameReader(r)
    with pytest.raises(protocol.FrameError, match=message):
        reader.read()
    with pytest.raises(protocol.FrameError, match="already failed"):
        reader.read()  # out of sync: never read on


def test_reader_splits_and_joins_reads_into_frames(pipe: tuple[int, int]) -> None:
    """One read may hold several frames, or a part of one (a short one, or one larger than
    a read): each comes back whole, in order."""
    r, w = pipe
    bodies = [b"", b"one", bytes(range(256)) * 40, b"last"]  # the third spans two reads
    frames = [framing.header(len(b)) + b for b in bodies]
    os.write(w, frames[0] + frames[1])
    reader = protocol.FrameReader(r)
    assert [reader.read(), reader.read()] == bodies[:2]
    rest = frames[2] + frames[3]
    cuts = [0, 5, 12, 100, 5000, len(rest) - 2, len(rest)]

    def trickle() -> None:
        for start, end in itertools.pairwise(cuts):
            os.write(w, rest[start:end])
            time.sleep(0.01)

    writer = threading.Thread(target=trickle)
    writer.start()
    assert [reader.read(), reader.read()] == bodies[2:]
    writer.join()
    assert not reader.ready()


def test_ready_says_whether_input_waits_polling_for_at_most_the_spin(
        pipe: tuple[int, int]) -> None:
    """The wait before a read: bytes that come within the spin are seen, an empty pipe is
    given up on once the spin is spent, and the end of the stream counts as input (the read
    that follows reports it)."""
    r, w = pipe
    reader = protocol.FrameReader(r)
    assert not reader.ready()
    assert not reader.ready(0.02)
    late = threading.Timer(0.01, os.write, (w, protocol.framing.header(2) + b"hi"))
    late.start()
    assert reader.ready(10.0)  # returns once the bytes land, not after the spin
    late.join()
    assert reader.read() == b"hi"
    assert not reader.ready()
    os.close(w)
    assert reader.ready()
    with pytest.raises(protocol.StreamClosed):
        reader.read()


def test_clean_eof_between_frames(pipe: tuple[int, int]) -> None:
    r, w = pipe
    os.close(w)
    with pytest.raises(protocol.StreamClosed):
        protocol.FrameReader(r).read()


def test_writer_counts_every_byte_it_writes(pipe: tuple[int, int]) -> None:
    """What a doorbell worker tells the host from: whether anything went on the pipe."""
    r, w = pipe
    writer = protocol.FrameWriter(w)
    assert writer.written == 0
    writer.write(b"abc")
    writer.write_raw(b"junk")
    assert writer.written == framing.HEADER.size + 3 + 4 == len(os.read(r, 100))


def test_writer_refuses_oversize_frames(pipe: tuple[int, int]) -> None:
    with pytest.raises(protocol.FrameError, match="exceeds"):
        protocol.FrameWriter(pipe[1], max_frame=8).write(b"x" * 9)


@pytest.mark.parametrize("value", [object(), {1: "int key"}, np.array(["s"]), {1.5}, 2**64,
                                   np.zeros(1 << 18)])
def test_codec_refuses_unsafe_values(value: object) -> None:
    with pytest.raises(protocol.WireTypeError, match=r"\$"):
        protocol.encode({"field": [value]})


def test_pickled_payload_is_rejected() -> None:
    body = pickle.dumps({"command": "STEP"})
    with pytest.raises((protocol.WireTypeError, protocol.MessageError)):
        protocol.unpack(body)


@pytest.mark.parametrize(("message", "error"), [
    ([9, 1, 3, {}], "unknown message kind 9"),
    ([[1], 1, 3, {}], r"unknown message kind \[1\]"),
    ([2, 1, [3], {}], r"unknown command code \[3\]"),
    ([2, 1, 99, {}], "unknown command code 99"),
    ([2, "x", 3, {}], "request id must be an int"),
    ([2, 1, 3, []], "payload must be a map"),
    ({"not": "a list"}, "4-element array"),
])
def test_malformed_messages_name_the_problem(message: object, error: str) -> None:
    import msgpack

    with pytest.raises(protocol.MessageError, match=error):
        protocol.unpack(msgpack.packb(message))
