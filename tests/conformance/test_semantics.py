"""What every engine must do, checked as behaviour rather than as exact numbers.

Only the public ``unisim.Backend`` API is used; each test runs once per ``EngineCase``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from unisim.errors import RemoteError
from unisim_protocol import Command

from .conftest import MODELS, EngineCase

GRAVITY = -6.0  # faller.xml's <option gravity>


def test_a_free_body_falls_with_the_declared_gravity(case: EngineCase) -> None:
    with case.open("faller.xml") as sim:
        start = sim.qpos.copy()
        steps = 200
        for _ in range(steps):
            sim.step()
        t = steps * sim.layout.timestep
        np.testing.assert_allclose(sim.qvel[:, 2], GRAVITY * t, rtol=0.02)
        np.testing.assert_allclose(sim.qpos[:, 2] - start[:, 2], 0.5 * GRAVITY * t * t,
                                   rtol=0.03)
        np.testing.assert_allclose(sim.qpos[:, 0:2], start[:, 0:2], atol=1e-4)
        np.testing.assert_allclose(sim.qvel[:, 3:6], 0.0, atol=1e-3)  # no spin appears


def test_a_spinning_free_body_keeps_its_momentum(case: EngineCase) -> None:
    """qvel means the origin's velocity and the body-frame angular velocity, as in MuJoCo.

    The spinner's centre of mass is 0.3 m along its x axis: started with its origin at rest
    and spinning at 2 rad/s about z, its COM moves in a straight line at 0.6 m/s along y.
    """
    spin, offset = 2.0, 0.3
    with case.open("spinner.xml") as sim:
        qvel = np.zeros((2, 6))
        qvel[:, 5] = spin
        sim.reset(qpos=sim.qpos.copy(), qvel=qvel)

        def com() -> np.ndarray:
            yaw = 2 * np.arctan2(sim.qpos[:, 6], sim.qpos[:, 3])
            return sim.qpos[:, 0:3] + offset * np.stack(
                [np.cos(yaw), np.sin(yaw), np.zeros_like(yaw)], axis=1)

        start = com()
        sim.step(substeps=500)
        t = 500 * sim.layout.timestep
        np.testing.assert_allclose(com() - start, np.tile([0, spin * offset * t, 0], (2, 1)),
                                   atol=2e-3)
        np.testing.assert_allclose(sim.qvel[:, 3:6], np.tile([0, 0, spin], (2, 1)), atol=1e-3)
        yaw = 2 * np.arctan2(sim.qpos[:, 6], sim.qpos[:, 3])
        np.testing.assert_allclose(yaw, spin * t, atol=2e-3)


def test_a_position_controlled_joint_approaches_its_target(case: EngineCase) -> None:
    target = np.array([0.6, 0.1])
    with case.open("arm.xml") as sim:
        error = [np.abs(sim.qpos - target).max()]
        for _ in range(4):
            sim.step(target, substeps=250)
            error.append(np.abs(sim.qpos - target).max())
        assert error[1] < error[0], f"no progress towards the target: {error}"
        assert error[-1] < 0.05 * error[0], f"did not settle on the target: {error}"
        np.testing.assert_allclose(sim.qvel, 0.0, atol=0.05)


@pytest.mark.parametrize("model", ["faller.xml", "arm.xml"])
def test_reset_restores_given_state_for_selected_envs_only(case: EngineCase, model: str) -> None:
    rng = np.random.default_rng(7)
    with case.open(model, num_envs=4) as sim:
        initial = sim.qpos.copy(), sim.qvel.copy()
        sim.step(np.full(sim.layout.nu, 0.1), substeps=30)
        before = sim.qpos.copy(), sim.qvel.copy()
        qpos = before[0][[1, 3]] + rng.normal(scale=0.05, size=(2, sim.layout.nq))
        if sim.layout.nq == 7:  # a free root: a unit quaternion
            qpos[:, 3:7] /= np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True)
        qvel = rng.normal(scale=0.1, size=(2, sim.layout.nv))
        sim.reset([1, 3], qpos=qpos, qvel=qvel)
        case.assert_same(sim.qpos[[1, 3]], qpos)
        case.assert_same(sim.qvel[[1, 3]], qvel)
        np.testing.assert_array_equal(sim.qpos[[0, 2]], before[0][[0, 2]])
        np.testing.assert_array_equal(sim.qvel[[0, 2]], before[1][[0, 2]])
        sim.reset(np.array([False, False, True, False]))  # back to the initial state
        case.assert_same(sim.qpos[2], initial[0][2])
        case.assert_same(sim.qvel[2], initial[1][2])
        case.assert_same(sim.qpos[[1, 3]], qpos)  # untouched by the second reset
        sim.step()  # and the reset envs move on from there
        assert not np.array_equal(sim.qpos[2], initial[0][2])


def test_reset_to_a_keyframe_is_the_initial_state(case: EngineCase) -> None:
    with case.open("faller.xml", keyframe="high") as sim:
        case.assert_same(sim.qpos, np.tile([0.5, -0.5, 8, 1, 0, 0, 0], (2, 1)))
        sim.step(substeps=10)
        sim.reset()
        case.assert_same(sim.qpos, np.tile([0.5, -0.5, 8, 1, 0, 0, 0], (2, 1)))
        case.assert_same(sim.qvel, np.zeros((2, 6)))


@pytest.mark.parametrize("model", ["faller.xml", "arm.xml"])
def test_layout_names_match_the_mjcf(case: EngineCase, model: str) -> None:
    root = ET.parse(MODELS / model).getroot()
    joints = [e.get("name") for e in root.iter() if e.tag in ("joint", "freejoint")
              and e.get("name") is not None]
    actuators = [e.get("name") for e in (root.find("actuator") or [])]
    bodies = [e.get("name") for e in root.iter("body")]
    with case.open(model) as sim:
        layout = sim.layout
        assert list(layout.joint_names) == joints
        assert list(layout.actuator_names) == actuators
        assert sorted(n for n in layout.body_names if n != "world") == sorted(bodies)
        assert sim.qpos.shape == (2, layout.nq) and sim.qvel.shape == (2, layout.nv)
        assert sim.ctrl.shape == (2, len(actuators)) == (2, layout.nu)
        free = any(e.tag == "freejoint" for e in root.iter())
        assert layout.nq - layout.nv == (1 if free else 0)


def test_state_views_change_only_on_step_and_reset(case: EngineCase) -> None:
    with case.open("arm.xml") as sim:
        sim.step(np.array([0.5, 0.1]), substeps=20)  # moving, not at rest
        snapshot = {name: view.copy() for name, view in sim.state().items()}
        sim.ping()
        sim.ctrl[:] = [1.0, -0.1]  # written, not stepped
        sim.ping()
        for name, view in sim.state().items():
            if name not in ("ctrl", "reset_mask"):
                np.testing.assert_array_equal(view, snapshot[name], err_msg=name)
        sim.step()
        assert not np.array_equal(sim.qpos, snapshot["qpos"])
        moved = sim.qpos.copy()
        sim.reset([0])
        assert not np.array_equal(sim.qpos[0], moved[0])
        np.testing.assert_array_equal(sim.qpos[1], moved[1])


def test_bad_requests_leave_the_backend_usable(case: EngineCase) -> None:
    with case.open("arm.xml") as sim:
        with pytest.raises(ValueError, match="substeps"):
            sim.step(substeps=0)
        with pytest.raises(ValueError, match="qpos must broadcast"):
            sim.reset([0], qpos=np.zeros((1, sim.layout.nq + 1)))
        with pytest.raises(ValueError, match="NaN"):
            sim.reset([0], qpos=np.full((1, sim.layout.nq), np.nan))
        with pytest.raises(IndexError, match="env_ids"):
            sim.reset([5])
        with pytest.raises(RemoteError) as remote:
            sim.request(Command.STEP, {"substeps": 0})
        assert not remote.value.faulted and "substeps must be at least 1" in str(remote.value)
        with pytest.raises(RemoteError) as remote:
            sim.request(Command.CAPTURE, {})
        assert not remote.value.faulted
        before = sim.qpos.copy()
        sim.step(np.array([0.5, 0.1]), substeps=5)
        assert not np.array_equal(sim.qpos, before)
        assert sim.ping() > 0


def test_an_unknown_keyframe_is_refused_at_init(case: EngineCase) -> None:
    with pytest.raises(RemoteError, match="no keyframe 'nope'"):
        case.open("faller.xml", keyframe="nope")
