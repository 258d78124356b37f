"""Faults injected through the test kit's mock engine: typed, prompt, leak-free."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import unisim
import unisim_protocol as protocol
from unisim.testing import Fault, mock_backend
from unisim_worker.main import Worker

Mock = Callable[..., unisim.Backend]


@pytest.fixture(params=["pipe", "doorbell"])
def stepping(request: pytest.FixtureRequest) -> str:
    """Every fault is checked on both STEP paths."""
    return str(request.param)


@pytest.fixture
def mock(stepping: str) -> Mock:
    """A mock-engine backend with the given fault script, on this test's STEP path."""
    def make(faults: list[Fault], timeout: float = 10.0, **options: Any) -> unisim.Backend:
        return mock_backend(4, nq=3, nv=2, nu=2, faults=faults, timeout=timeout,
                            doorbell=stepping == "doorbell", **options)
    return make


def test_mock_dynamics_are_predictable(mock: Mock) -> None:
    with mock([], timestep=0.5) as sim:
        sim.step(np.ones((4, 2)), substeps=2)
        # qvel: 0 -> 0.5 -> 1.0; qpos[:2]: 0 -> 0.25 -> 0.75
        assert np.array_equal(sim.qvel, np.full((4, 2), 1.0))
        assert np.array_equal(sim.qpos, np.tile([0.75, 0.75, 0.0], (4, 1)))


def test_remote_exception_keeps_backend_usable(mock: Mock) -> None:
    with mock([Fault.error("STEP", call=2, message="boom")]) as sim:
        sim.step(np.ones((4, 2)))
        with pytest.raises(unisim.RemoteError, match="boom") as caught:
            sim.step()
        assert caught.value.exc_type == "ScriptedError"
        assert not caught.value.faulted
        assert "mock/engine.py" in caught.value.remote_traceback
        sim.step()  # usable: third call succeeds
        assert sim.qvel[0, 0] > 0


def test_faulted_remote_exception_kills_backend(mock: Mock) -> None:
    with mock([Fault.error("STEP", faulted=True)]) as sim:
        with pytest.raises(unisim.RemoteError) as caught:
            sim.step()
        assert caught.value.faulted
        with pytest.raises(unisim.BackendDead, match="scripted failure"):
            sim.step()


@pytest.mark.parametrize(("fault", "returncode"), [
    (Fault.kill("STEP", call=3), -signal.SIGKILL),
    (Fault.exit("STEP", call=3, code=7), 7),
    (Fault.segfault("STEP", call=3), -signal.SIGSEGV),
])
def test_crash_mid_step_is_typed_and_prompt(fault: Fault, returncode: int, mock: Mock) -> None:
    with mock([fault]) as sim:
        sim.step()
        sim.step()
        with pytest.raises(unisim.WorkerCrashed) as caught:  # not at the 10 s deadline
            sim.step()
        assert caught.value.returncode == returncode
        assert f"pid {sim.worker_pid}" in str(caught.value)
        with pytest.raises(unisim.BackendDead, match=r"WorkerCrashed|killed|exited"):
            sim.step()


def test_crash_report_carries_stderr_tail(mock: Mock) -> None:
    with mock([Fault.segfault("STEP")]) as sim:
        with pytest.raises(unisim.WorkerCrashed) as caught:
            sim.step()
    assert "Fatal Python error: Segmentation fault" in caught.value.stderr_tail


def test_hang_times_out_at_the_deadline_and_is_reaped(mock: Mock) -> None:
    with mock([Fault.hang("STEP")], timeout=0.5) as sim:
        with pytest.raises(unisim.WorkerTimeout, match=r"did not answer within 0\.5 s"):
            sim.step()
        assert not Path(f"/proc/{sim.worker_pid}").exists()  # killed and reaped


def test_progress_frames_keep_a_slow_init_alive_and_silence_times_out(mock: Mock) -> None:
    with mock([Fault.slow("INIT", seconds=4.0, progress=True)], init_timeout=2.0) as sim:
        sim.step()
    with pytest.raises(unisim.WorkerTimeout, match=r"within 2 s during INIT"):
        mock([Fault.slow("INIT", seconds=4.0)], init_timeout=2.0)


@pytest.mark.parametrize("interpreter", ["host", "py38"])
@pytest.mark.parametrize("seconds", [0.001, 1.5])
def test_progress_frames_keep_a_slow_step_alive_and_it_steps(
        seconds: float, interpreter: str, mock: Mock, request: pytest.FixtureRequest) -> None:
    """On the doorbell too: PROGRESS frames during a STEP rung on the line re-arm the
    deadline (the worker then answers on the pipe as well), whether the host is still
    spinning or asleep when they come, and the steps after it are normal."""
    python = request.getfixturevalue("py38") if interpreter == "py38" else None
    faults = [Fault.slow("STEP", call=2, seconds=seconds, progress=True, interval=0.1)]
    with mock(faults, timeout=0.5, timestep=0.5, python=python) as sim:
        for _ in range(3):
            sim.step(np.ones((4, 2)))
        assert np.array_equal(sim.qvel, np.full((4, 2), 1.5))  # all three were stepped


def test_progress_keeps_every_worker_of_a_pool_alive(mock: Mock) -> None:
    """While the host reads one worker's PROGRESS frames, another worker's unread ones keep
    its deadline too (any request of a pool: a long INIT with progress is the same wait): a
    slow STEP on every worker, longer than the deadline, goes through."""
    faults = [Fault.slow("STEP", call=2, seconds=1.0, progress=True)]
    with mock(faults, workers=2, timeout=0.4, timestep=0.5) as sim:
        for _ in range(3):
            sim.step(np.ones((4, 2)))
        assert np.array_equal(sim.qvel, np.full((4, 2), 1.5))


def test_garbage_on_the_protocol_stream_is_a_protocol_error(mock: Mock) -> None:
    """On both paths, from the very step during which the worker wrote it."""
    with mock([Fault.garbage("STEP", data=b"hello\n" * 4)]) as sim:
        with pytest.raises(unisim.ProtocolError, match="bad magic"):
            sim.step()
        with pytest.raises(unisim.BackendDead):
            sim.step()


def test_garbage_during_a_step_fails_that_step_with_default_settings() -> None:
    with mock_backend(4, faults=[Fault.garbage("STEP", call=2)]) as sim:
        sim.step()
        with pytest.raises(unisim.ProtocolError, match="bad magic"):
            sim.step()


def test_a_well_formed_frame_no_one_asked_for_is_a_protocol_error(mock: Mock) -> None:
    body = protocol.pack(protocol.Kind.REPLY, 99, None, {})
    unasked = protocol.framing.header(len(body)) + body
    with mock([Fault.garbage("STEP", data=unasked)]) as sim:
        with pytest.raises(unisim.ProtocolError):
            sim.step()


def test_c_level_writes_to_fd1_do_not_corrupt_the_stream(caplog: pytest.LogCaptureFixture,
                                                         mock: Mock) -> None:
    caplog.set_level("INFO", logger="unisim_worker")
    with mock([Fault.print_fd1("STEP", data=b"USIM\x01\x00junk\n")]) as sim:
        sim.step(np.ones((4, 2)))
        sim.step()
        assert sim.qvel[0, 0] > 0
        deadline = time.monotonic() + 2.0
        while "junk" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.01)
    assert "junk" in caplog.text  # forwarded to logging from the worker's stderr


def test_progress_frames_are_throttled_and_the_last_always_goes_out() -> None:
    """An engine reporting every item of a long setup (IsaacGym: every env) sends a few
    frames, not one per item: unread, thousands would fill the pipe and stall the worker
    while the host reads another worker of the pool."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # a full pipe fails at once, as a stall would
    try:
        worker = Worker(protocol.FrameReader(read_end), protocol.FrameWriter(write_end))
        worker.handle(7, protocol.Command.PING, {})
        for done in range(1, 5001):
            worker.progress(done, 5000, "creating envs")
        os.close(write_end)
        reader, frames = protocol.FrameReader(read_end), []
        with contextlib.suppress(protocol.StreamClosed):
            while True:
                frames.append(protocol.unpack(reader.read()))
    finally:
        os.close(read_end)
    progress = [payload["done"] for kind, _, _, payload in frames
                if kind == protocol.Kind.PROGRESS]
    assert progress[0] == 1 and progress[-1] == 5000
    assert len(progress) < 20  # 5,000 calls take a few ms: a frame per 0.1 s, plus the last
