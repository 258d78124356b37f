"""The mock engine records the physics randomisation it was asked for (users' config tests)."""

from __future__ import annotations

import numpy as np
import pytest

from unisim import PhysicsRandomization, Push, RemoteError, Uniform, WorkerDied
from unisim.physics_randomization import friction, gain, gravity, mass
from unisim.testing import Fault, applied_physics, mock_backend

SPEC = PhysicsRandomization(parameters=(
    friction(Uniform(0.5, 1.5), geoms=["foot"]),
    mass(Uniform(0.0, 1.0), bodies=["base"], operation="add"),
    gain(Uniform(0.9, 1.1), actuators=["a0"]),
    gravity(Uniform(-1.0, 1.0)),
), push=Push(Uniform(-1.0, 1.0), axes=("x",)), seed=11)
NAMES = {"joint_names": ["j0", "j1"], "actuator_names": ["a0", "a1"],
         "body_names": ["world", "base"], "geom_names": ["floor", "foot"]}


@pytest.mark.parametrize("python", ["host", "py38"])
def test_mock_records_what_the_host_drew_and_when(python: str,
                                                  request: pytest.FixtureRequest) -> None:
    worker = request.getfixturevalue("py38") if python == "py38" else None
    with mock_backend(6, **NAMES, randomization=SPEC, workers=2, python=worker) as sim:
        applied, count = applied_physics(sim)
        np.testing.assert_array_equal(count, [1] * 6)  # every env at start
        drawn = sim.physics_parameters()
        for label, values in drawn.items():
            np.testing.assert_array_equal(applied[label], values)
        assert drawn["gravity"].shape == (6, 3)
        sim.reset([0, 4])
        sim.randomize([5])
        applied, count = applied_physics(sim)
        np.testing.assert_array_equal(count, [2, 1, 1, 1, 2, 2])
        now = sim.physics_parameters()
        for label in now:
            np.testing.assert_array_equal(applied[label], now[label])
            assert np.array_equal(now[label][1:4], drawn[label][1:4]), label  # untouched
            assert not np.array_equal(now[label][[0, 4, 5]], drawn[label][[0, 4, 5]]), label
        qvel = sim.qvel.copy()
        sim.push([1], velocity=[[2.5]])
        expected = qvel.copy()
        expected[1, 0] += 2.5
        np.testing.assert_array_equal(sim.qvel, expected)


def test_no_redraw_at_reset_when_asked_and_scheduled_pushes() -> None:
    from dataclasses import replace

    spec = replace(SPEC, on_reset=False, push=Push(Uniform(1.0, 1.0), axes=("x",), interval=3))
    with mock_backend(2, **NAMES, randomization=spec) as sim:
        before = sim.physics_parameters()
        sim.reset()
        after = sim.physics_parameters()
        for label in before:
            np.testing.assert_array_equal(before[label], after[label])
        assert applied_physics(sim)[1].tolist() == [1, 1]
        for _ in range(2):
            sim.step()
        np.testing.assert_array_equal(sim.qvel[:, 0], 0.0)
        sim.step()  # the third step pushes every env by exactly 1 m/s
        np.testing.assert_array_equal(sim.qvel[:, 0], 1.0)


def test_mock_checks_names_and_pushes_fail_like_any_command() -> None:
    with pytest.raises(RemoteError, match="no geom 'hand'; its geoms: floor, foot"):
        mock_backend(2, **NAMES, randomization=PhysicsRandomization(
            parameters=(friction(Uniform(0.5, 1.0), geoms=["hand"]),)))
    with mock_backend(2, **NAMES, randomization=SPEC,
                      faults=[Fault.kill("PHYSICS", call=2)]) as sim:
        with pytest.raises(WorkerDied):
            sim.push()


def test_a_restart_applies_the_same_parameters_again() -> None:
    with mock_backend(4, **NAMES, randomization=SPEC) as sim:
        sim.randomize([2])
        before = sim.physics_parameters()
        sim.restart()
        applied, count = applied_physics(sim)
        np.testing.assert_array_equal(count, [2, 2, 3, 2])  # once more each, by the new workers
        for label, values in before.items():
            np.testing.assert_array_equal(applied[label], values)
            np.testing.assert_array_equal(sim.physics_parameters()[label], values)
