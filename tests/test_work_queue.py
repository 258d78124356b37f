"""Workers that share rows: a STEP's chunks claimed from one queue (unisim_protocol.doorbell)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import unisim
from unisim import split
from unisim.channel import Channel
from unisim.errors import RemoteError, UnisimError
from unisim_protocol import Command, doorbell

SINGLE = {"engine": "MuJoCo 3.2.3", "threaded": False, "shares_rows": True}
READER = """
import os, sys
sys.path.insert(0, sys.argv[1])
from doorbell import claim
fd = int(sys.argv[2])
os.read(0, 1)  # start
got = [claim(fd)]
print(got[0], flush=True)
os.read(0, 1)  # every reader holds a token: now race for the rest
chunk = claim(fd)
while chunk is not None:
    got.append(chunk)
    chunk = claim(fd)
print(" ".join(map(str, got)))
"""

def test_chunks_cover_every_row_shrink_and_fit_the_pipe() -> None:
    for num_envs, workers in [(1, 1), (150, 3), (151, 3), (4096, 16), (10**6, 2),
                              (10**6, 256), (10**6, 4096)]:
        bounds = doorbell.chunk_bounds(num_envs, workers)
        assert doorbell.valid_bounds(bounds, num_envs)
        sizes = np.diff(bounds)
        assert (np.diff(sizes[:-1]) <= 0).all()  # they shrink (the very last may be cut)
    sizes = np.diff(doorbell.chunk_bounds(16384, 8))
    share = 16384 // 8
    assert list(sizes[:8]) == [share // 2] * 8  # the first round: half of every row
    assert sizes[-1] == share // doorbell.TAIL  # the last: 1/TAIL of a share
    assert len(sizes) < 16384 // sizes[-1] // 8  # far fewer claims than equal chunks


def test_a_plan_that_skips_overlaps_or_overflows_is_invalid() -> None:
    assert not doorbell.valid_bounds([0, 5, 5, 10], 10)  # an empty chunk
    assert not doorbell.valid_bounds([0, 6, 5, 10], 10)
    assert not doorbell.valid_bounds([0, 5], 10)  # rows 5..9 never stepped
    assert not doorbell.valid_bounds([1, 10], 10)
    assert not doorbell.valid_bounds([0, 2.5, 10], 10)
    assert not doorbell.valid_bounds(list(range(doorbell.MAX_CHUNKS + 2)),
                                       doorbell.MAX_CHUNKS + 1)


def test_each_token_goes_to_exactly_one_of_several_processes() -> None:
    queue = doorbell.WorkQueue()
    try:
        tokens = doorbell.MAX_CHUNKS  # the most one step queues
        queue.plan(tokens)
        protocol_dir = os.path.dirname(doorbell.__file__)
        readers = [subprocess.Popen([sys.executable, "-c", READER, protocol_dir, str(queue.fd)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    pass_fds=(queue.fd,)) for _ in range(4)]
        queue.fill()
        for reader in readers:  # each takes one token and waits
            reader.stdin.write(b"g")  # type: ignore[union-attr]
            reader.stdin.flush()  # type: ignore[union-attr]
            reader.stdout.readline()  # type: ignore[union-attr]
        outputs = [r.communicate(b"g", timeout=30)[0].split() for r in readers]
        claimed = sorted(int(k) for out in outputs for k in out)
        assert claimed == list(range(tokens))  # none twice, none lost
        assert all(outputs)  # four processes shared one queue
        assert doorbell.claim(queue.fd) is None
        queue.fill()  # leftovers of a failed step are dropped before the next fill
        queue.fill()
        assert len([k for k in iter(lambda: doorbell.claim(queue.fd), None)]) == tokens
    finally:
        queue.close()


def test_single_threaded_engines_share_rows_unless_physics_is_per_worker() -> None:
    assert split.choose(SINGLE, 4096, cpus=16).shared
    assert split.choose(SINGLE, 4096, workers=3, cpus=16).shared
    assert not split.choose(SINGLE, 4096, cpus=16, shareable=False).shared
    assert not split.choose(SINGLE, 4096, workers=1, cpus=16).shared
    assert not split.choose({**SINGLE, "shares_rows": False}, 4096, cpus=16).shared
    assert not split.choose({"threaded": True, "shares_rows": False}, 4096, cpus=16).shared


NUM_ENVS = 151  # with 3 workers, chunks that shrink from 26 rows to 1
SCENE = {"model": "quadruped", "keyframe": "stand"}  # an initial state that is not all zeros


def _drive(sim: unisim.Backend, steps: int, reset: bool) -> tuple[np.ndarray, np.ndarray]:
    """States and warning flags after each of ``steps`` steps (with a reset halfway)."""
    controls = np.random.default_rng(7).uniform(-1, 1, (steps, NUM_ENVS, sim.layout.nu))
    states, flags = [], []
    for k in range(steps):
        sim.step(controls[k])
        if reset and k == steps // 2:
            qvel = np.full((3, sim.layout.nv), 0.5)
            qvel[1] = 1e11  # env 75 warns (bad qvel) on the next step
            sim.reset([0, 75, 150], qpos=np.tile(sim.qpos[1], (3, 1)), qvel=qvel)
        states.append(np.concatenate([sim.qpos, sim.qvel], axis=1))
        flags.append(sim.warnings.copy())
    return np.array(states), np.array(flags)


def _run(py38: str, workers: int, steps: int = 24,
         reset: bool = True) -> tuple[np.ndarray, np.ndarray]:
    with unisim.Backend("mujoco", **SCENE, num_envs=NUM_ENVS, python=py38,
                        workers=workers, progress=False) as sim:
        return _drive(sim, steps, reset)


def test_shared_rows_step_bitwise_as_one_worker(py38: str) -> None:
    with unisim.Backend("mujoco", **SCENE, num_envs=NUM_ENVS, python=py38,
                        workers=3, progress=False) as sim:
        assert sim.split is not None and sim.split.shared
        assert "shared queue" in sim.split.reason
        assert len(set(sim.worker_pids)) == 3 and sim.layout.num_envs == NUM_ENVS
    one, one_flags = _run(py38, workers=1)
    three, three_flags = _run(py38, workers=3)
    assert np.array_equal(one, three)
    assert np.array_equal(one_flags, three_flags) and three_flags[:, 75].any()
    assert np.abs(np.diff(one, axis=0)).sum() > 0  # it moved


def test_a_step_whose_workers_died_fails_and_a_restart_steps_as_new(py38: str) -> None:
    fresh, _ = _run(py38, workers=2, steps=4, reset=False)
    with unisim.Backend("mujoco", **SCENE, num_envs=NUM_ENVS, python=py38,
                        workers=2, progress=False) as sim:
        for pid in sim.worker_pids:
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(UnisimError, match="worker"):
            sim.step()  # the queue keeps tokens nobody claimed
        sim.restart()
        after, _ = _drive(sim, 4, reset=False)
    assert np.array_equal(after, fresh)


def test_init_refuses_a_queue_that_is_not_an_inherited_pipe(py38_channel: Channel) -> None:
    py38_channel.hello(30)
    spec = {"engine": "mujoco", "model": str(unisim.models.resolve("cartpole")),
            "num_envs": 2, "first_env": 0, "total_envs": 2,
            "queue": {"fd": 0, "bounds": [0, 2], "owner": True}}
    with pytest.raises(RemoteError, match="queue fd 0 is not a pipe this worker inherited"):
        py38_channel.request(Command.INIT, spec, 60)


def test_init_refuses_chunks_that_miss_rows(py38_channel: Channel) -> None:
    py38_channel.hello(30)
    spec = {"engine": "mujoco", "model": str(unisim.models.resolve("cartpole")),
            "num_envs": 4, "first_env": 0, "total_envs": 4,
            "queue": {"fd": 0, "bounds": [0, 2], "owner": True}}
    with pytest.raises(RemoteError, match=r"bounds: \[0, \.\.\., 4\] increasing"):
        py38_channel.request(Command.INIT, spec, 60)
