"""Restart after a crash, and Ctrl-C in the middle of a step."""

from __future__ import annotations

import signal
import threading

import numpy as np
import pytest

import unisim
from unisim.testing import Fault, mock_backend


@pytest.mark.parametrize("doorbell", [False, True])
def test_restart_brings_a_crashed_backend_back_over_the_same_views(doorbell: bool) -> None:
    with mock_backend(4, workers=2, doorbell=doorbell,
                      faults=[Fault.kill("STEP", call=3)]) as sim:
        qpos, tensors_before = sim.qpos, sim.state()
        sim.step(np.ones((4, 2)))
        old_pids = sim.worker_pids
        sim.step()
        with pytest.raises(unisim.WorkerCrashed):
            sim.step()
        sim.restart()
        assert set(sim.worker_pids).isdisjoint(old_pids)
        assert np.array_equal(qpos, np.zeros((4, 2)))  # initial state, in the old view
        sim.step(np.ones((4, 2)))  # the fresh workers' STEP calls count from 1 again
        sim.step()
        assert qpos[0, 0] > 0 and tensors_before["qpos"] is not None


def test_training_loop_survives_a_worker_crash_by_restarting() -> None:
    returns, restarts = [], 0
    with mock_backend(8, timestep=0.1, faults=[Fault.segfault("STEP", call=40)]) as sim:
        for _ in range(100):
            try:
                sim.step(-0.5 * sim.qpos)  # a "policy" reading the views
            except unisim.WorkerCrashed:
                restarts += 1
                sim.restart()
                continue
            returns.append(float(-np.abs(sim.qpos).sum()))
    assert restarts == 2  # the crash recurs at call 40 of each fresh worker set
    assert len(returns) == 98


SLOW_STEP_2 = Fault.slow("STEP", call=2, seconds=0.6)


@pytest.mark.usefixtures("ctrl_c")
def test_keyboard_interrupt_mid_step_leaves_doorbell_backend_consistent() -> None:
    """SIGINT reaches the host only (the worker has its own session); the step completes."""
    with mock_backend(2, doorbell=True, timestep=1.0, faults=[SLOW_STEP_2]) as sim:
        sim.step(np.ones((2, 2)))
        worker = sim.worker_pid
        threading.Timer(0.2, signal.raise_signal, (signal.SIGINT,)).start()
        with pytest.raises(KeyboardInterrupt):
            sim.step()  # interrupted while the worker is in its slow step 2
        assert sim.worker_pid == worker
        sim.step()  # waits for step 2 to finish first, then runs step 3
        assert np.array_equal(sim.qvel, np.full((2, 2), 3.0))  # exactly three steps applied
        assert np.array_equal(sim.qpos, np.full((2, 2), 6.0))  # 1 + 2 + 3


@pytest.mark.usefixtures("ctrl_c")
def test_keyboard_interrupt_mid_pipe_read_marks_backend_dead() -> None:
    """On the pipe, bytes read when the interrupt lands may be lost: dead, never wrong."""
    with mock_backend(2, doorbell=False, timestep=1.0, faults=[SLOW_STEP_2]) as sim:
        sim.step(np.ones((2, 2)))
        threading.Timer(0.2, signal.raise_signal, (signal.SIGINT,)).start()
        with pytest.raises(KeyboardInterrupt):
            sim.step()
        with pytest.raises(unisim.BackendDead, match="stream position is lost"):
            sim.step()
        sim.restart()
        sim.step(np.ones((2, 2)))
        assert np.array_equal(sim.qvel, np.ones((2, 2)))
