"""Physics domain randomisation: real MuJoCo workers, real physics, seeded draws."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import unisim
from unisim import Gaussian, LogUniform, PhysicsRandomization, Push, RemoteError, Uniform
from unisim.physics_draws import PARAMETERS, uniforms
from unisim.physics_randomization import (
    armature,
    damping,
    friction,
    gain,
    gravity,
    mass,
    stiffness,
)

PHYSICS = str(Path(__file__).parent / "models" / "physics.xml")
G = 9.81
ENVS = 8


def physics_backend(parameters: tuple, **options: object) -> unisim.Backend:
    spec = PhysicsRandomization(parameters=parameters, seed=7)
    return unisim.Backend("mujoco", model=PHYSICS, num_envs=ENVS, randomization=spec,
                          progress=False, **options)  # type: ignore[arg-type]


def start(sim: unisim.Backend, qpos: list[float], qvel: list[float]) -> None:
    sim.reset(qpos=np.array(qpos), qvel=np.array(qvel))


@pytest.mark.parametrize("python", ["host", "py38"])
def test_boxes_slide_less_far_on_more_friction(python: str, request: pytest.FixtureRequest
                                               ) -> None:
    worker = request.getfixturevalue("py38") if python == "py38" else None
    spec = (friction(Uniform(0.2, 0.8), geoms=["box"], operation="set"),)
    with physics_backend(spec, python=worker) as sim:
        mu = sim.physics_parameters()["friction:box"]
        start(sim, [0.0, 0.0, 0.0], [2.0, 0.0, 0.0])
        mu_after_reset = sim.physics_parameters()["friction:box"]  # redrawn at reset
        assert not np.array_equal(mu, mu_after_reset)
        sim.step(substeps=1000)  # 2 s: every box has stopped
        distance = sim.qpos[:, 0].copy()
        assert np.abs(sim.qvel[:, 0]).max() < 1e-3
    order = np.argsort(mu_after_reset)
    assert np.all(np.diff(distance[order]) < 0), (mu_after_reset, distance)
    predicted = 2.0 ** 2 / (2 * mu_after_reset * G)  # v^2 / (2 mu g)
    np.testing.assert_allclose(distance, predicted, rtol=0.05)


def test_heavier_bodies_fall_alike_and_press_harder() -> None:
    """Free fall is mass-independent; the contact's normal force is m g, which the
    friction bound mu m g shows: a 10 N push moves only boxes lighter than 10/(mu g)."""
    spec = (mass(Uniform(0.5, 4.0), bodies=["box"], operation="set"),)
    with physics_backend(spec) as sim:
        start(sim, [0.0, 0.9, 0.0], [0.0, 0.0, 0.0])
        m = sim.physics_parameters()["mass:box"]
        sim.step(substeps=150)  # 0.3 s, before the 0.43 s landing
        z = sim.qpos[:, 1].copy()
        np.testing.assert_allclose(z, 0.9 - 0.5 * G * 0.3 ** 2, atol=0.01)
        np.testing.assert_allclose(z, z[0], rtol=0, atol=1e-12)  # identical fall
        sim.step(substeps=500)  # landed and settled
        x0 = sim.qpos[:, 0].copy()
        force, seconds, mu = 10.0, 0.5, 0.5
        sim.step(np.array([force]), substeps=int(seconds / 0.002))
        moved = sim.qpos[:, 0] - x0
    accel = np.maximum(force / m - mu * G, 0.0)  # friction holds the heavy ones
    assert (accel == 0).any() and (accel > 0).any(), m
    np.testing.assert_allclose(moved, 0.5 * accel * seconds ** 2, rtol=0.1, atol=3e-3)


def test_more_damping_slows_the_swing() -> None:
    spec = (damping(Uniform(0.0, 0.5), joints=["swing"], operation="set"),)
    with physics_backend(spec) as sim:
        start(sim, [0.0, 0.0, 1.0], [0.0, 0.0, 0.0])
        b = sim.physics_parameters()["damping:swing"]
        sim.step(substeps=1500)  # 3 s
        angle, speed = sim.qpos[:, 2].copy(), sim.qvel[:, 2].copy()
    inertia = 0.25 + 0.4 * 0.05 ** 2  # the bob about the hinge
    energy = 0.5 * inertia * speed ** 2 + G * 0.5 * (1 - np.cos(angle))
    order = np.argsort(b)
    assert np.all(np.diff(energy[order]) < 0), (b, energy)
    # Light damping: the energy decays as exp(-b t / I).
    start_energy = G * 0.5 * (1 - math.cos(1.0))
    np.testing.assert_allclose(energy / start_energy, np.exp(-b * 3.0 / inertia), rtol=0.25,
                               atol=0.02)


def test_gravity_per_env() -> None:
    spec = (gravity(Uniform(-2.0, 2.0)),)
    with physics_backend(spec) as sim:
        start(sim, [0.0, 0.9, 0.0], [0.0, 0.0, 0.0])
        g = sim.physics_parameters()["gravity"]
        assert g.shape == (ENVS, 3)
        sim.step(substeps=100)  # 0.2 s of free fall
        z = sim.qpos[:, 1].copy()
    np.testing.assert_allclose(z - 0.9, 0.5 * (-G + g[:, 2]) * 0.2 ** 2, rtol=0.02)


# -- reproducibility ----------------------------------------------------------------------

EVERYTHING = PhysicsRandomization(parameters=(
    friction(Uniform(0.5, 1.5), bodies=["world", "torso", "front_left_shin"]),
    mass(Uniform(-0.5, 1.0), bodies=["torso"], operation="add"),
    damping(LogUniform(0.5, 2.0), joints=["fl_hip", "br_knee"]),
    stiffness(Uniform(0.0, 2.0), joints=["fl_hip"], operation="set"),
    armature(Uniform(0.5, 2.0), joints=["fl_knee"]),
    gain(Uniform(0.8, 1.2), actuators=["fl_hip", "fl_knee"]),
    gravity(Gaussian(0.0, 0.2, low=-0.5, high=0.5)),
), push=Push(Uniform(-0.5, 0.5), interval=7), seed=3)


def rollout(workers: int, python: str | None, seed: int = 3
            ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    from dataclasses import replace

    with unisim.Backend("mujoco", model="quadruped", keyframe="stand", num_envs=6,
                        workers=workers, python=python, progress=False,
                        randomization=replace(EVERYTHING, seed=seed)) as sim:
        ctrl = np.tile([0.2, 0.9, 0.0, 0.9, 0.0, 0.9, -0.2, 0.9], (6, 1))
        for _ in range(10):
            sim.step(ctrl, substeps=2)
        sim.reset([1, 4])
        sim.randomize([0, 5])
        sim.push([2, 3], velocity=[[1.0, -0.5], [0.0, 0.5]])
        sim.push([4])
        for _ in range(10):
            sim.step(ctrl, substeps=2)
        return sim.physics_parameters(), np.concatenate([sim.qpos, sim.qvel], axis=1)


@pytest.mark.parametrize("python", ["host", "py38"])
def test_same_seed_same_parameters_and_trajectories_whatever_the_workers(
        python: str, request: pytest.FixtureRequest) -> None:
    worker = request.getfixturevalue("py38") if python == "py38" else None
    params_1, state_1 = rollout(1, worker)
    params_2, state_2 = rollout(2, worker)
    assert params_1.keys() == params_2.keys()
    for label in params_1:
        np.testing.assert_array_equal(params_1[label], params_2[label], err_msg=label)
    np.testing.assert_array_equal(state_1, state_2)
    params_other, state_other = rollout(1, worker, seed=4)
    assert not np.array_equal(params_other["gravity"], params_1["gravity"])
    assert not np.array_equal(state_other, state_1)


@pytest.mark.parametrize("python", ["host", "py38"])
def test_one_env_alone_runs_as_env_0_of_two(python: str, request: pytest.FixtureRequest
                                            ) -> None:
    """One env keeps its state in its own MjData between steps (the "single" stepper); with
    two, env 0 is stepped by the batch or the loop. The same draws (mass: mj_setConst
    overwrites the data), pushes, resets, steps and frames, bit for bit."""
    worker = request.getfixturevalue("py38") if python == "py38" else None
    runs = []
    for num_envs, stepper in ((1, "single"), (2, "loop" if worker else "batch")):
        with unisim.Backend("mujoco", model="quadruped", keyframe="stand", num_envs=num_envs,
                            python=worker, progress=False, randomization=EVERYTHING) as sim:
            assert sim.layout.stepper == stepper
            ctrl = np.tile([0.2, 0.9, 0.0, 0.9, 0.0, 0.9, -0.2, 0.9], (num_envs, 1))
            states = []
            for k in range(24):  # a push every 7 steps
                sim.step(ctrl * (k % 3), substeps=2)
                states.append(np.concatenate([sim.qpos[0], sim.qvel[0]]))
                if k == 8:
                    sim.randomize([0])  # new parameters, the state kept
                    sim.push([0], velocity=[[0.3, -0.2]])
                if k == 15:
                    sim.reset([0], qpos=sim.qpos[:1] + 0.01)
            parameters = {label: values[0] for label, values in sim.physics_parameters().items()}
            runs.append((np.array(states), parameters, sim.capture(0, width=64, height=48)))
    (states_1, parameters_1, frame_1), (states_2, parameters_2, frame_2) = runs
    np.testing.assert_array_equal(states_1, states_2)
    assert parameters_1.keys() == parameters_2.keys()
    for label in parameters_1:
        np.testing.assert_array_equal(parameters_1[label], parameters_2[label], err_msg=label)
    np.testing.assert_array_equal(frame_1, frame_2)
    assert len(np.unique(states_1[:, 0])) == len(states_1)  # it moved on every step


def test_a_closed_backend_still_referenced_holds_no_shared_memory() -> None:
    """close() drops the draws' views of the slots with the backend's own (a failed test's
    traceback, say, keeps the backend), so the mapping's descriptor closes at once."""
    from unisim.testing.leaks import descriptors

    before = descriptors()
    with physics_backend((gravity(Uniform(-2.0, 2.0)),)) as sim:
        sim.step()
        assert descriptors() != before
    assert descriptors() == before
    assert repr(sim).endswith("(closed)>")  # still referenced here


def test_draws_of_an_env_depend_only_on_seed_env_and_count() -> None:
    envs = np.arange(10)
    counts = np.array([0, 1, 2, 3, 4, 0, 1, 2, 3, 4])
    together = uniforms(5, PARAMETERS, envs, counts, 4)
    for i in envs:
        alone = uniforms(5, PARAMETERS, envs[i:i + 1], counts[i:i + 1], 4)
        np.testing.assert_array_equal(alone[0], together[i])
    assert ((together >= 0) & (together < 1)).all()
    assert len(np.unique(together)) == together.size
    many = uniforms(0, PARAMETERS, np.arange(20000), np.zeros(20000, dtype=np.int64), 1)
    assert abs(many.mean() - 0.5) < 0.01 and abs(many.var() - 1 / 12) < 0.005


# -- bad input: clear errors before anything starts ---------------------------------------

@pytest.mark.parametrize("build, message", [
    (lambda: friction(Uniform(1.0, 0.5), geoms=["box"]), r"low > high \(1.0 > 0.5\)"),
    (lambda: friction(Uniform(-0.5, 1.0), geoms=["box"], operation="set"),
     "friction must be >= 0"),
    (lambda: mass(Uniform(-1.0, 2.0), bodies=["box"], operation="set"), "mass must be positive"),
    (lambda: mass(Uniform(-1.0, 2.0), bodies=["box"]), "scale factor must be >= 0"),
    (lambda: damping(Gaussian(1.0, 0.5), joints=["swing"], operation="set"),
     "damping must be >= 0"),
    (lambda: damping(Gaussian(1.0, -0.5), joints=["swing"]), "std >= 0"),
    (lambda: gain(LogUniform(0.0, 2.0), actuators=["push_x"]), "0 < low"),
    (lambda: friction(Uniform(0.5, 1.0)), "name geoms= or bodies="),
    (lambda: mass(Uniform(0.5, 1.0), bodies=[]), "name at least one"),
    (lambda: unisim.physics_randomization.Parameter("viscosity", Uniform(0, 1)),
     "unknown quantity 'viscosity'"),
    (lambda: Push(Uniform(0, 1), axes=("x", "w")), "push axes"),
    (lambda: PhysicsRandomization(), "nothing to randomise"),
])
def test_bad_specs_fail_when_built(build, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        build()


@pytest.mark.parametrize("parameter, message", [
    (friction(Uniform(0.5, 1.0), geoms=["nope"]),
     "no geom 'nope'; its geoms: floor, box, bob"),
    (mass(Uniform(0.5, 1.0), bodies=["boxx"]), "no body 'boxx'"),
    (damping(Uniform(0.5, 1.0), joints=["swim"]), "no joint 'swim'"),
    (gain(Uniform(0.5, 1.0), actuators=["pull"]), "no actuator 'pull'"),
    (mass(Uniform(-2.0, 1.0), bodies=["box"], operation="add"),
     "mass add of up to -2 can make a mass -1"),
])
def test_bad_names_and_values_fail_at_init(parameter: unisim.physics_randomization.Parameter,
                                           message: str) -> None:
    with pytest.raises(RemoteError, match=message):
        physics_backend((parameter,))


def test_pushes_need_a_free_joint_and_a_push_spec() -> None:
    spec = PhysicsRandomization(push=Push(Uniform(-1, 1)))
    with pytest.raises(RemoteError, match="pushes need a free joint"):
        unisim.Backend("mujoco", model=PHYSICS, num_envs=2, randomization=spec, progress=False)
    with physics_backend((friction(Uniform(0.5, 1.0), geoms=["box"]),)) as sim:
        with pytest.raises(ValueError, match="no Push"):
            sim.push()
    with unisim.Backend("mujoco", model=PHYSICS, num_envs=2, progress=False) as sim:
        with pytest.raises(ValueError, match="randomises no physics"):
            sim.randomize()
