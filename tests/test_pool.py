"""Worker pools: K processes over row ranges of one set of slots, same results as one."""

from __future__ import annotations

import numpy as np
import pytest

import unisim
from unisim.pool import split_rows
from unisim.testing import Fault, mock_backend


def test_split_rows_covers_every_env_once() -> None:
    assert split_rows(10, 3) == [range(0, 3), range(3, 6), range(6, 10)]
    assert split_rows(1, 1) == [range(0, 1)]
    with pytest.raises(ValueError, match="workers must lie in"):
        split_rows(2, 3)


@pytest.mark.parametrize("interpreter", ["host", "py38"])
def test_pool_is_bitwise_a_single_worker(interpreter: str, request: pytest.FixtureRequest) -> None:
    python = request.getfixturevalue("py38") if interpreter == "py38" else None
    rng = np.random.default_rng(3)
    controls = rng.uniform(-1, 1, size=(15, 7, 8))
    results = []
    for workers in (1, 3):
        with unisim.Backend("mujoco", model="quadruped", num_envs=7, keyframe="stand",
                            workers=workers, python=python) as sim:
            assert len(set(sim.worker_pids)) == workers
            for ctrl in controls:
                sim.step(ctrl, substeps=2)
            sim.reset([2, 6], qvel=np.ones(14))  # rows of two different workers
            assert np.array_equal(sim.qvel[[2, 6]], np.ones((2, 14)))
            results.append((sim.qpos.copy(), sim.qvel.copy()))
    assert np.array_equal(results[0][0], results[1][0])
    assert np.array_equal(results[0][1], results[1][1])


def test_one_crashed_member_takes_the_pool_down() -> None:
    with mock_backend(4, workers=2, faults=[Fault.exit("STEP", call=2, code=5)]) as sim:
        sim.step()
        with pytest.raises(unisim.WorkerCrashed, match="exited with status 5"):
            sim.step()
        with pytest.raises(unisim.BackendDead):
            sim.step()
