"""Framing and codec under property-based testing, and large frames under signal storms."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import unisim_protocol as protocol

scalars = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
           | st.floats(allow_nan=False) | st.text(max_size=20) | st.binary(max_size=40))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
kinds = st.sampled_from(sorted(protocol.messages.KIND_NAMES))
commands = st.sampled_from(sorted(protocol.COMMAND_NAMES))


@pytest.fixture(scope="module")
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    yield r, w
    os.close(r)
    os.close(w)


@pytest.mark.timeout(600)  # `make fuzz`'s 10,000 examples: minutes on a loaded 2-core machine
@settings(deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(kind=kinds, request_id=st.integers(0, 2**32), command=commands,
       payload=st.dictionaries(st.text(max_size=8), values, max_size=5))
def test_any_message_round_trips_through_a_pipe(pipe: tuple[int, int], kind: int,
                                                request_id: int, command: int,
                                                payload: dict[str, object]) -> None:
    r, w = pipe
    protocol.FrameWriter(w).write(protocol.pack(kind, request_id, command, payload))
    assert protocol.unpack(protocol.FrameReader(r).read()) == (kind, request_id, command,
                                                               payload)


@settings(deadline=None)
@example(data=b"\x94\x91\x00\x00\x00\x00")  # a list where the kind goes (found by this test)
@given(data=st.binary(max_size=64))
def test_arbitrary_bytes_never_escape_as_anything_but_protocol_errors(data: bytes) -> None:
    try:
        protocol.unpack(data)
    except (protocol.WireTypeError, protocol.MessageError):
        pass


def test_large_frames_arrive_intact_while_signals_interrupt_the_writes() -> None:
    """Pipe writes of megabytes are cut short by signals; the writer must finish each one."""
    r, w = os.pipe()
    frames = [np.random.default_rng(k).bytes(4 << 20) for k in range(6)]
    received: list[bytes] = []
    reader = threading.Thread(
        target=lambda: received.extend(protocol.FrameReader(r).read() for _ in frames))
    ticks = 0

    def tick(signum: int, frame: object) -> None:
        nonlocal ticks
        ticks += 1

    previous = signal.signal(signal.SIGALRM, tick)
    signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
    try:
        reader.start()
        writer = protocol.FrameWriter(w)
        for frame in frames:
            writer.write(frame)
        reader.join(timeout=60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, previous)
        os.close(r)
        os.close(w)
    assert ticks > 10  # the signals really fired during the writes
    assert received == frames
