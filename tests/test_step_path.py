"""Which of unisim's files a step runs through (docs/architecture.md, "The step path").

Each test traces one call with ``sys.setprofile``, which sees every Python function
entered, and keeps those defined under ``unisim/``. The host side is a ``Backend.step`` on
the default path (host memory, the doorbell, nan_policy "warn", no randomisation); the
worker side is one doorbell STEP served by a ``Worker`` in this process, as the worker
process serves it.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from unisim_protocol import Command, FrameReader, FrameWriter, schemas
from unisim_protocol import doorbell as bell
from unisim_worker.main import Worker

import unisim
from unisim import models, stepping
from unisim.layout import Layout
from unisim.slots import Arena

ROOT = Path(unisim.__file__).resolve().parent
HOST = {"backend.py", "stepping.py", "protocol/doorbell.py"}
WORKER = {"worker/main.py", "worker/engines/mujoco/steppers.py", "protocol/doorbell.py"}
PIPE = {"backend.py", "stepping.py", "pool.py", "channel.py", "watchdog.py",
        "protocol/messages.py", "protocol/codec.py", "protocol/framing.py"}


def traced(call: Callable[[], Any]) -> list[tuple[str, str]]:
    """(file under unisim/, function) of every Python function ``call()`` enters, in order."""
    seen: list[tuple[str, str]] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            seen.append((frame.f_code.co_filename, frame.f_code.co_name))

    gc.disable()  # a collection could run some other object's finaliser inside the trace
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
        gc.enable()
    files = {name: Path(name).resolve() for name, _ in seen}
    return [(files[name].relative_to(ROOT).as_posix(), function) for name, function in seen
            if files[name].is_relative_to(ROOT)]


@pytest.fixture
def long_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host waiting longer than a slice for its reply checks on the worker between
    slices, a rare path that calls out; a loaded test machine could make any step that
    slow, so the slices are made longer than any step here."""
    monkeypatch.setattr(stepping, "WORKER_CHECK_EVERY", 10.0)


def _ctrls(shape: tuple[int, ...]) -> list[Any]:
    """A step's ctrl as a training loop passes it: numpy of either width, a torch tensor."""
    torch = pytest.importorskip("torch")
    ctrl = np.full(shape, 0.5)
    return [ctrl, ctrl.astype(np.float32), torch.from_numpy(ctrl)]


@pytest.mark.usefixtures("long_slices")
def test_a_default_step_runs_through_three_host_files() -> None:
    with unisim.Backend("mujoco", model="cartpole", num_envs=4, workers=1,
                        progress=False) as sim:
        for ctrl in _ctrls(sim.ctrl.shape):
            for _ in range(3):  # the forecast of the replies settles
                sim.step(ctrl)
            calls = traced(lambda: sim.step(ctrl))  # noqa: B023 (called at once)
            assert calls[:2] == [("backend.py", "step"), ("stepping.py", "step")]
            assert {file for file, _ in calls} == HOST, calls
            np.testing.assert_array_equal(sim.ctrl, 0.5)


@pytest.mark.usefixtures("long_slices")
def test_a_pipe_step_runs_through_the_pool_the_channel_and_the_framing() -> None:
    with unisim.Backend("mujoco", model="cartpole", num_envs=4, workers=1, doorbell=False,
                        progress=False) as sim:
        ctrl = np.zeros(sim.ctrl.shape)
        sim.step(ctrl)
        calls = traced(lambda: sim.step(ctrl))
    assert {file for file, _ in calls} == PIPE, calls


def test_a_doorbell_step_runs_through_the_worker_loop_and_the_stepper() -> None:
    """The worker side: with the host's three, five files in all."""
    requests, replies = os.pipe(), os.pipe()
    worker = Worker(FrameReader(requests[0]), FrameWriter(replies[1]))
    arena = None
    try:
        init = worker.handle(1, Command.INIT, schemas.request(
            "INIT", engine="mujoco", model=models.resolve("cartpole"), num_envs=4))
        arena = Arena(Layout.from_replies([init]).slots, 4, lines=1)
        assert worker.handle(2, Command.ATTACH, schemas.attach_request(
            arena.declaration(range(4), 0))) == {}
        assert worker.handle(3, Command.DOORBELL, schemas.request("DOORBELL")) == {}
        line = bell.Line(arena.doorbells[0])
        arena.views["ctrl"][:] = 0.1
        line.ring(4, bell.CMD_STEP, 2)
        calls = traced(lambda: worker.requests.serve_one(worker))
        assert (line.words[bell.REPLY], line.words[bell.STATUS]) == (4, bell.STATUS_OK)
        assert arena.views["qvel"].any()  # it stepped, pushed by the ctrl
    finally:
        if worker.engine is not None:
            worker.engine.close()
        if arena is not None:
            arena.close()
        for fd in (*requests, *replies):
            os.close(fd)
    assert calls[0] == ("worker/main.py", "serve_one")
    assert {file for file, _ in calls} == WORKER, calls
    assert len(HOST | WORKER) == 5
