"""Restart after a crash, and Ctrl-C in the middle of a step."""

from __future__ import annotations

import signal
import threading
import time

import numpy as np
import pytest

import unisim


@pytest.mark.parametrize("doorbell", [False, True])
def test_restart_brings_a_crashed_backend_back_over_the_same_views(doorbell: bool) -> None:
    crash = {"command": "STEP", "call": 3, "action": "kill"}
    with unisim.Backend("mock", num_envs=4, workers=2, doorbell=doorbell,
                        options={"faults": [crash]}) as sim:
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
    crash = {"command": "STEP", "call": 40, "action": "segfault"}
    returns, restarts = [], 0
    with unisim.Backend("mock", num_envs=8, options={"faults": [crash], "timestep": 0.1}) as sim:
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


SLOW_STEP_2 = {"command": "STEP", "call": 2, "action": "slow", "seconds": 0.6}


def test_keyboard_interrupt_mid_step_leaves_doorbell_backend_consistent() -> None:
    """SIGINT reaches the host only (the worker has its own session); the step completes."""
    with unisim.Backend("mock", num_envs=2, doorbell=True,
                        options={"faults": [SLOW_STEP_2], "timestep": 1.0}) as sim:
        sim.step(np.ones((2, 2)))
        worker = sim.worker_pid
        threading.Timer(0.2, signal.raise_signal, (signal.SIGINT,)).start()
        with pytest.raises(KeyboardInterrupt):
            sim.step()  # interrupted while the worker is in its slow step 2
        assert sim.worker_pid == worker
        start = time.monotonic()
        sim.step()  # waits for step 2 to finish first, then runs step 3
        assert time.monotonic() - start > 0.2
        assert np.array_equal(sim.qvel, np.full((2, 2), 3.0))  # exactly three steps applied
        assert np.array_equal(sim.qpos, np.full((2, 2), 6.0))  # 1 + 2 + 3


def test_keyboard_interrupt_mid_pipe_read_marks_backend_dead() -> None:
    """On the pipe, bytes read when the interrupt lands may be lost: dead, never wrong."""
    with unisim.Backend("mock", num_envs=2, doorbell=False,
                        options={"faults": [SLOW_STEP_2], "timestep": 1.0}) as sim:
        sim.step(np.ones((2, 2)))
        threading.Timer(0.2, signal.raise_signal, (signal.SIGINT,)).start()
        with pytest.raises(KeyboardInterrupt):
            sim.step()
        with pytest.raises(unisim.BackendDead, match="stream position is lost"):
            sim.step()
        sim.restart()
        sim.step(np.ones((2, 2)))
        assert np.array_equal(sim.qvel, np.ones((2, 2)))
