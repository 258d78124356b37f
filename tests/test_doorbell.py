"""The shared-memory doorbell STEP path: same results as the pipe; either, idle, sleeps."""

from __future__ import annotations

import mmap
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import unisim
import unisim_protocol
from unisim import split
from unisim.testing import Fault, mock_backend


def _asleep(pid: int, samples: int = 20) -> int:
    """Of ``samples`` looks at the process 10 ms apart, how many found it asleep (state S in
    /proc): a process that spins, even one that yields, is runnable (R) whenever looked at."""
    count = 0
    for _ in range(samples):
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        count += state == "S"
        time.sleep(0.01)
    return count


@pytest.mark.parametrize("interpreter", ["host", "py38"])
def test_doorbell_and_pipe_give_identical_trajectories(interpreter: str,
                                                       request: pytest.FixtureRequest) -> None:
    python = request.getfixturevalue("py38") if interpreter == "py38" else None
    controls = np.random.default_rng(5).uniform(-1, 1, size=(30, 6, 8))
    results = []
    for doorbell in (False, True):
        with unisim.Backend("mujoco", model="quadruped", num_envs=6, keyframe="stand",
                            workers=2, doorbell=doorbell, python=python) as sim:
            for ctrl in controls:
                sim.step(ctrl, substeps=3)
            sim.reset([1])
            sim.step(controls[0])
            results.append(sim.qpos.copy())
    assert np.array_equal(results[0], results[1])


@pytest.mark.parametrize("doorbell", [True, False])
def test_idle_worker_sleeps_instead_of_spinning(doorbell: bool) -> None:
    """On either transport the worker spins for the next request only briefly, then
    sleeps: on the futex (its line's WORKER_WAITING says so), or in a blocking read of the
    pipe."""
    with unisim.Backend("mock", num_envs=2, doorbell=doorbell) as sim:
        for _ in range(100):
            sim.step()
        time.sleep(0.2)  # past the worker's spin, into its sleep
        assert _asleep(sim.worker_pid) >= 15
        if doorbell:
            line = sim._stepping.lines[0]
            assert line.words[unisim_protocol.doorbell.WORKER_WAITING] == 1
        sim.step()  # and it wakes up for the next request


def test_status_says_when_a_step_left_frames_on_the_pipe() -> None:
    """A plain step leaves the pipe empty and STATUS_OK, so the host has nothing to read;
    a step that fails, or reports progress, says STATUS_PIPE and the host reads its frames
    before the step returns."""
    bell = unisim_protocol.doorbell
    faults = [Fault.error("STEP", call=3), Fault.slow("STEP", call=4, seconds=0.3,
                                                         progress=True, interval=0.05)]
    with mock_backend(2, faults=faults) as sim:
        line = sim._stepping.lines[0]
        channel = sim._pool.members[0].channel
        for _ in range(2):
            sim.step()
            assert line.words[bell.STATUS] == bell.STATUS_OK
            assert not channel.has_input()
        with pytest.raises(unisim.RemoteError):
            sim.step()
        assert line.words[bell.STATUS] == bell.STATUS_PIPE
        sim.step()  # the slow one, through its PROGRESS frames and its REPLY frame
        assert line.words[bell.STATUS] == bell.STATUS_PIPE
        assert not channel.has_input()  # all read
        sim.step()
        assert line.words[bell.STATUS] == bell.STATUS_OK


def test_close_releases_the_arena_at_once_without_a_gc_pass() -> None:
    """The stepping strategy holds the doorbell lines (views of the arena); no reference
    cycle may keep them, and so the mapping's descriptor, alive after ``close()``."""
    import gc

    from unisim.testing.leaks import descriptors

    before = descriptors()
    gc.disable()
    try:
        for _ in range(3):
            with unisim.Backend("mujoco", model="cartpole", num_envs=4, progress=False) as sim:
                sim.step()
        assert descriptors() == before
    finally:
        gc.enable()


def test_the_forecast_dozes_only_before_an_answer_it_has_seen_come_late() -> None:
    """A waiter spins while answers come at once, and dozes until shortly before a slow
    answer is due; a quicker answer is believed at once, a slower one a fifth of the way."""
    forecast = unisim_protocol.doorbell.Forecast(100e-6)
    assert forecast.plan == (0.0, 100e-6)
    forecast.observe(20e-6)  # quick: within the spin's margin
    assert forecast.plan == (0.0, 100e-6)
    forecast.observe(10e-3)  # slower: a fifth of the way from 20 us to 10 ms
    expected = 20e-6 + 0.2 * (10e-3 - 20e-6)
    doze, spin = forecast.plan
    assert doze == pytest.approx(expected - 0.1 * expected)
    assert spin == pytest.approx(100e-6 + 0.2 * expected)
    forecast.observe(1e-3)  # quicker: believed at once
    assert forecast.plan[0] == pytest.approx(1e-3 - 150e-6)  # the least margin


def test_the_forecast_sleeps_until_woken_where_the_peer_needs_every_core() -> None:
    forecast = unisim_protocol.doorbell.Forecast(100e-6, spare_core=False)
    forecast.observe(20e-6)  # quick: spin as always
    assert forecast.plan == (0.0, 100e-6)
    forecast.observe(10e-3)  # late: no doze, no spin
    assert forecast.plan == (0.0, 0.0)


@pytest.mark.skipif(split.cores() < 2, reason="a core to spare needs two of them")
def test_the_host_sleeps_through_a_long_step_when_the_workers_threads_fill_every_core() -> None:
    """With a core of its own the host dozes until a long step's answer is due and spins
    for it; when the workers' threads fill every core its plan is to sleep until the worker
    wakes it, leaving them every core (the plan's waits: ``doorbell.Forecast``)."""

    def host_plan(threads: int) -> tuple[float, float]:
        faults = [Fault.slow("STEP", call=k, seconds=0.02) for k in range(1, 5)]
        with mock_backend(2, faults=faults, workers=1, threads=threads) as sim:
            assert sim.split is not None and sim.split.threads == threads
            for _ in range(3):
                sim.step()  # the host's forecast has seen the waits
            plan: tuple[float, float] = sim._stepping._forecast.plan
            return plan

    doze, spin = host_plan(threads=1)
    assert doze > 0 and spin > 0, (doze, spin)
    assert host_plan(threads=split.cores()) == (0.0, 0.0)


@pytest.mark.skipif(split.cores() < 2, reason="a core to spare needs two of them")
def test_the_worker_sleeps_through_the_hosts_long_turns_when_its_threads_fill_every_core(
        ) -> None:
    """Between steps the host works out the next ctrl (a policy, on threads of its own).
    When the workers' threads fill every core the worker sleeps until it is rung: the host
    finds its WORKER_WAITING word set when it rings. With a core to spare it dozes, then
    spins for the request it expects, so the host mostly finds it awake."""
    waiting = unisim_protocol.doorbell.WORKER_WAITING

    def rung_asleep(threads: int) -> int:
        with mock_backend(2, workers=1, threads=threads) as sim:
            words = sim._stepping.lines[0].words
            for _ in range(5):  # the worker's forecast learns the host's turn
                time.sleep(0.02)
                sim.step()
            asleep = 0
            for _ in range(30):
                time.sleep(0.02)
                asleep += words[waiting]
                sim.step()
            return asleep

    filled = rung_asleep(threads=split.cores())
    spare = rung_asleep(threads=1)
    assert filled >= 25, f"rung asleep {filled} of 30 times"
    assert spare < filled, f"with a core to spare it was asleep at {spare} of 30 rings"


@pytest.mark.parametrize("awaited, waiting, near", [("REQUEST", "WORKER_WAITING", "REQUEST_NEAR"),
                                                   ("REPLY", "HOST_WAITING", "REPLY_NEAR")])
def test_a_waiter_whose_answer_is_marked_near_wakes_and_spins_for_it(
        awaited: str, waiting: str, near: str) -> None:
    """A waiter asleep in a slice of 30 s wakes when its peer marks the answer near
    (``Line.near``): it clears the mark, and its answer, given after, ends its wait. An
    unmarked waiter would sleep out its slice; the mark alone changes no word it waits on."""
    bell = unisim_protocol.doorbell
    awaited_word, waiting_word, near_word = (getattr(bell, name)
                                             for name in (awaited, waiting, near))
    memory = mmap.mmap(-1, bell.LINE_BYTES)  # shared with the forked waiter
    line = bell.Line(np.frombuffer(memory, dtype="<u4"))
    words = line.words

    def until(condition: Any, seconds: float) -> bool:
        end = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > end:
                return False
        return True

    pid = os.fork()
    if pid == 0:  # the waiter
        status = 1
        try:
            value = line.await_change(awaited_word, 0, waiting_word, 0.0, 30.0, lambda: None,
                                      0.0, near_word)
            status = 0 if value == 7 else 1
        finally:
            os._exit(status)
    try:
        assert until(lambda: words[waiting_word] == 1, 10.0), "the waiter never slept"
        time.sleep(0.05)  # in the futex by now: a mark set as it goes to sleep may be missed
        line.near(awaited_word, near_word, waiting_word)
        cleared = until(lambda: words[near_word] == 0, 5.0)
        assert words[awaited_word] == 0
    finally:
        line.publish(awaited_word, 7, waiting_word)  # ends the wait either way
        _, status = os.waitpid(pid, 0)
    assert cleared, "the waiter slept on through its peer's mark"
    assert os.waitstatus_to_exitcode(status) == 0
