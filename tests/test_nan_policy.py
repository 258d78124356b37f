"""NaN/inf ctrl and MuJoCo's per-env warnings reach the host: flags, a log line, nan_policy.

On the host's MuJoCo (4: ``mujoco.batch``) and on the Python 3.8 worker (MuJoCo 3.2: a loop
over MjData), whose warning tables differ (7 and 8 kinds).
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import unisim

NUM_ENVS, NU = 6, 8
STEPS = 5


def python_of(interpreter: str, request: pytest.FixtureRequest) -> str | None:
    return request.getfixturevalue("py38") if interpreter == "py38" else None


def gait(i: int) -> np.ndarray:
    return np.tile(0.3 * np.sin(0.2 * i + np.arange(NU)), (NUM_ENVS, 1))


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("interpreter", ["host", "py38"])
def test_nan_ctrl_in_env_3_is_flagged_logged_and_leaves_the_others_untouched(
        interpreter: str, workers: int, request: pytest.FixtureRequest,
        caplog: pytest.LogCaptureFixture) -> None:
    python = python_of(interpreter, request)
    options = {"model": "quadruped", "num_envs": NUM_ENVS, "keyframe": "stand",
               "python": python, "workers": workers, "progress": False}
    with unisim.Backend("mujoco", **options) as clean:
        for i in range(STEPS):
            clean.step(gait(i), substeps=4)
        expected = clean.qpos.copy()
    with unisim.Backend("mujoco", **options) as sim:
        assert sim.nan_policy == "warn"
        assert "badctrl" in sim.warning_names
        badctrl = 1 << sim.warning_names.index("badctrl")
        for i in range(STEPS):
            ctrl = gait(i)
            if i == 2:
                ctrl[3, 1] = np.nan
                with caplog.at_level(logging.WARNING, logger="unisim"):
                    sim.step(ctrl, substeps=4)
                assert sim.warnings.tolist() == [0, 0, 0, badctrl, 0, 0]
                (record,) = [r for r in caplog.records if r.name == "unisim"]
                assert "badctrl in env 3;" in record.getMessage()
            else:
                sim.step(ctrl, substeps=4)
                if i > 2:
                    assert not sim.warnings.any()  # the flags are the last step's
        np.testing.assert_array_equal(sim.qpos[[0, 1, 2, 4, 5]], expected[[0, 1, 2, 4, 5]])
        assert np.isfinite(sim.qpos).all()


@pytest.mark.parametrize("interpreter", ["host", "py38"])
def test_one_env_alone_flags_its_bad_step_and_only_that_step(
        interpreter: str, request: pytest.FixtureRequest) -> None:
    """One env keeps its state in its own MjData (the "single" stepper), with its own
    copy of the warning flags to the slot."""
    with unisim.Backend("mujoco", model="quadruped", num_envs=1, keyframe="stand",
                        python=python_of(interpreter, request), progress=False) as sim:
        assert sim.layout.stepper == "single"
        badctrl = 1 << sim.warning_names.index("badctrl")
        flags = []
        for i in range(4):
            ctrl = gait(i)[:1]
            if i == 1:
                ctrl[0, 2] = np.nan
            sim.step(ctrl)
            flags.append(int(sim.warnings[0]))
        assert flags == [0, badctrl, 0, 0]
        assert np.isfinite(sim.qpos).all()


@pytest.mark.parametrize("interpreter", ["host", "py38"])
def test_nan_policy_raise_names_env_3_and_steps_nothing(
        interpreter: str, request: pytest.FixtureRequest) -> None:
    with unisim.Backend("mujoco", model="quadruped", num_envs=NUM_ENVS, keyframe="stand",
                        python=python_of(interpreter, request), nan_policy="raise",
                        progress=False) as sim:
        before = sim.qpos.copy()
        ctrl = gait(0)
        ctrl[3, 0] = np.inf
        with pytest.raises(ValueError, match=r"NaN or infinite in env 3;"):
            sim.step(ctrl)
        np.testing.assert_array_equal(sim.qpos, before)
        ctrl[[1, 4], 2] = np.nan
        with pytest.raises(ValueError, match=r"in envs 1, 3, 4;"):
            sim.step(ctrl)
        sim.step(gait(0))  # a clean step goes through
        assert not sim.warnings.any()


@pytest.mark.parametrize("interpreter", ["host", "py38"])
def test_nan_policy_reset_restarts_the_flagged_env(interpreter: str,
                                                   request: pytest.FixtureRequest) -> None:
    with unisim.Backend("mujoco", model="quadruped", num_envs=NUM_ENVS, keyframe="stand",
                        python=python_of(interpreter, request), nan_policy="reset",
                        progress=False) as sim:
        initial = sim.qpos.copy()
        for i in range(3):
            sim.step(gait(i), substeps=4)
        ctrl = gait(3)
        ctrl[3] = np.nan
        sim.step(ctrl, substeps=4)
        assert sim.warnings[3] and not sim.warnings[[0, 1, 2, 4, 5]].any()
        np.testing.assert_array_equal(sim.qpos[3], initial[3])
        assert not np.array_equal(sim.qpos[2], initial[2])


def test_nan_policy_is_checked_and_engines_without_warnings_have_zero_flags() -> None:
    with pytest.raises(ValueError, match="nan_policy must be one of"):
        unisim.Backend("mujoco", model="cartpole", nan_policy="ignore")
    with unisim.Backend("mock", num_envs=3, progress=False, nan_policy="raise") as sim:
        assert sim.warnings.tolist() == [0, 0, 0] and sim.warning_names == ()
        with pytest.raises(ValueError, match="env 1;"):
            sim.step(np.array([[0.0], [np.nan], [0.0]]).repeat(sim.layout.nu, axis=1))
