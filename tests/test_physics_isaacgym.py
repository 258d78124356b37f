"""Physics randomisation on the IsaacGym adapter, end to end over the SDK fake (CPU
pipeline): a real Python 3.8 worker, the adapter's per-actor setters, the fake's physics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import unisim
from unisim import PhysicsRandomization, Push, RemoteError, Uniform
from unisim.physics_randomization import armature, damping, friction, gain, mass

BOX = str(Path(__file__).parent / "models" / "box.xml")
CPU = {"pipeline": "cpu"}


def test_boxes_pushed_on_the_fake_slide_less_far_on_more_friction(
        isaacgym_fake_python: str) -> None:
    # The fake's ground has friction 1 and, as PhysX, averages it with the box's.
    spec = PhysicsRandomization(parameters=(
        friction(Uniform(1.5, 4.0), bodies=["box"], operation="set"),), push=Push(Uniform(0, 0)))
    with unisim.Backend("isaacgym", BOX, 6, python=isaacgym_fake_python, options=CPU,
                        randomization=spec, progress=False) as sim:
        mu = sim.physics_parameters()["friction:box"]
        sim.step(substeps=20)  # settle on the ground
        x0 = sim.qpos[:, 0].copy()
        sim.push(velocity=[[2.0, 0.0]])
        np.testing.assert_allclose(sim.qvel[:, 0], 2.0, atol=1e-3)  # published at once
        for _ in range(10):
            sim.step(substeps=50)  # 1 s: every box has stopped
        distance = sim.qpos[:, 0] - x0
    order = np.argsort(mu)
    assert np.all(np.diff(distance[order]) < 0), (mu, distance)
    # The fake's pyramidal friction cones stop the boxes early at high friction; the
    # least-friction box slides as v^2 / (2 mu g) predicts, mu the average of box and ground.
    least = order[0]
    combined = (mu[least] + 1.0) / 2
    np.testing.assert_allclose(distance[least], 2.0 ** 2 / (2 * combined * 9.81), rtol=0.1)


QUADRUPED = PhysicsRandomization(parameters=(
    friction(Uniform(1.0, 2.0), bodies=["torso", "front_left_shin"]),
    mass(Uniform(-1.0, 2.0), bodies=["torso"], operation="add"),
    damping(Uniform(0.5, 2.0), joints=["fl_hip", "br_knee"]),
    armature(Uniform(0.5, 2.0), joints=["fl_knee"]),
    gain(Uniform(0.8, 1.2), actuators=["fl_hip", "fl_knee"]),
), push=Push(Uniform(-0.5, 0.5)), seed=2)


def quadruped_rollout(python: str, workers: int, randomization: PhysicsRandomization | None
                      ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    with unisim.Backend("isaacgym", "quadruped", 4, python=python, options=CPU,
                        keyframe="stand", workers=workers, randomization=randomization,
                        progress=False) as sim:
        ctrl = np.tile([0.2, 0.9, 0.0, 0.9, 0.0, 0.9, -0.2, 0.9], (4, 1))
        for _ in range(5):
            sim.step(ctrl, substeps=4)
        if randomization is not None:
            sim.reset([1])
            sim.randomize([2])
            sim.push([0, 3])
        for _ in range(5):
            sim.step(ctrl, substeps=4)
        params = sim.physics_parameters() if randomization is not None else {}
        return params, np.concatenate([sim.qpos, sim.qvel], axis=1)


def test_same_seed_same_trajectories_on_the_fake_whatever_the_workers(
        isaacgym_fake_python: str) -> None:
    params_1, state_1 = quadruped_rollout(isaacgym_fake_python, 1, QUADRUPED)
    params_2, state_2 = quadruped_rollout(isaacgym_fake_python, 2, QUADRUPED)
    for label in params_1:
        np.testing.assert_array_equal(params_1[label], params_2[label], err_msg=label)
    # IsaacGym keeps float32 world positions and lays envs out per sim, so an env's origin
    # depends on the split: env-local positions agree to float32 rounding, not bit for bit.
    np.testing.assert_allclose(state_1, state_2, rtol=0, atol=1e-6)
    _, plain = quadruped_rollout(isaacgym_fake_python, 1, None)
    assert not np.allclose(plain, state_1)  # the randomisation changed the physics


@pytest.mark.parametrize(("parameter", "message"), [
    (friction(Uniform(0.5, 1.0), bodies=["world", "torso"]), "the ground plane's friction"),
    (friction(Uniform(0.5, 1.0), geoms=["torso"]), "keeps no geom names; name bodies"),
    (mass(Uniform(-20.0, 1.0), bodies=["torso"], operation="add"), "can make a mass"),
    (damping(Uniform(0.5, 1.0), joints=["fl_ankle"]), "no joint 'fl_ankle'"),
])
def test_the_adapter_refuses_at_init(isaacgym_fake_python: str,
                                     parameter: unisim.physics_randomization.Parameter,
                                     message: str) -> None:
    spec = PhysicsRandomization(parameters=(parameter,))
    with pytest.raises(RemoteError, match=message):
        unisim.Backend("isaacgym", "quadruped", 2, python=isaacgym_fake_python, options=CPU,
                       randomization=spec, progress=False)
