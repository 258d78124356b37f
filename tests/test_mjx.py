"""The MJX engine behind host shared memory: the same trajectory as MJX in-process.

Runs wherever JAX and MJX are installed (on the CPU too); skipped, saying so, elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest

import unisim

from .mjx_support import QUADRUPED, in_process_rollout, jax_cache, mjx_missing, random_ctrls

pytestmark = [pytest.mark.skipif(mjx_missing() is not None, reason=str(mjx_missing())),
              pytest.mark.usefixtures("jax_cache"), pytest.mark.timeout(600)]
__all__ = ["jax_cache"]

NUM_ENVS = 4


def test_mjx_behind_shared_memory_matches_mjx_in_process() -> None:
    with unisim.Backend("mjx", QUADRUPED, num_envs=NUM_ENVS, data_plane="shm",
                        init_timeout=600, progress=False) as sim:
        assert sim.layout.engine == "mjx" and sim.qpos.dtype == np.float32
        ctrls = random_ctrls(5, NUM_ENVS, sim.layout.nu)
        trajectory = []
        for ctrl in ctrls:
            sim.step(ctrl)
            trajectory.append(sim.qpos.copy())
        expected = in_process_rollout(QUADRUPED, NUM_ENVS, ctrls)
        for got, want in zip(trajectory, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)  # GPUs add in any order

        start = sim.qpos.copy()
        pose = start[0] + 0.01
        sim.reset([1, 3], qpos=pose)
        np.testing.assert_allclose(sim.qpos[[1, 3]], np.stack([pose, pose]), atol=1e-7)
        np.testing.assert_array_equal(sim.qpos[[0, 2]], start[[0, 2]])
        sim.reset()
        np.testing.assert_array_equal(sim.qpos[0], sim.qpos[3])


def test_mjx_refuses_a_missing_keyframe() -> None:
    with pytest.raises(unisim.RemoteError,
                       match=r"no keyframe 'crouch'; its keyframes: \['stand'\]"):
        unisim.Backend("mjx", QUADRUPED, num_envs=1, keyframe="crouch", progress=False)


def test_non_finite_controls_step_as_zero() -> None:
    """MJX would carry a NaN or infinite ctrl into the state; the worker zeroes it for the step."""
    bad = random_ctrls(3, NUM_ENVS, 8)
    bad[:, 0, 1] = np.nan
    bad[1:, 2, 5] = -np.inf
    with unisim.Backend("mjx", QUADRUPED, num_envs=NUM_ENVS, data_plane="shm",
                        init_timeout=600, progress=False) as sim:
        for ctrl in bad:
            sim.step(ctrl)
        got = sim.qpos.copy()
    want = in_process_rollout(QUADRUPED, NUM_ENVS, np.where(np.isfinite(bad), bad, 0))[-1]
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)  # GPUs add in any order
