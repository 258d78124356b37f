"""The SDK fake's contacts with the ground, run for real on its Python 3.8: friction
combined as PhysX combines it by default (the average). Sources: docs/isaacgym.md
("Simulation of legged_gym and IsaacGymEnvs tasks")."""
from __future__ import annotations

import pytest

from .test_isaacgym_fake import run_fake

G = 9.81


def test_ground_friction_is_the_average_of_the_ground_and_the_shape(
        isaacgym_fake_python: str) -> None:
    # legged_gym's anymal_c_flat_config: "on ground planes the friction combination mode is
    # averaging, i.e total friction = (foot_friction + 1.)/2."; boxes on a plane of
    # friction 1 under a gravity tilted to tan = 0.62 slide where the combined friction is
    # below 0.62 and stay where it is above
    out = run_fake(isaacgym_fake_python, """
        gym = gymapi.acquire_gym()
        params = gymapi.SimParams()
        params.dt, params.substeps = 0.005, 1
        params.up_axis = gymapi.UP_AXIS_Z
        params.gravity = gymapi.Vec3(0.62 * 9.81, 0.0, -9.81)
        sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
        plane = gymapi.PlaneParams()
        plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
        plane.static_friction = plane.dynamic_friction = 1.0
        gym.add_ground(sim, plane)
        options = gymapi.AssetOptions()
        options.thickness = 0.0
        box = gym.create_box(sim, 0.2, 0.2, 0.2, options)
        slippery = gym.get_asset_rigid_shape_properties(box)
        slippery[0].friction = 0.0
        gym.set_asset_rigid_shape_properties(box, slippery)  # the asset's: for its actors
        origins = []
        for k, friction in enumerate((None, 0.5, 1.0)):
            env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 3)
            pose = gymapi.Transform()
            pose.p = gymapi.Vec3(0.0, 0.0, 0.1)
            actor = gym.create_actor(env, box, pose, "box", k, 0)
            origins.append(gym.get_env_origin(env).x)
            if friction is not None:  # the actor's own, after creation
                shapes = gym.get_actor_rigid_shape_properties(env, actor)
                shapes[0].friction = friction
                assert gym.set_actor_rigid_shape_properties(env, actor, shapes)
        assert gym.prepare_sim(sim)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        step(gym, sim, 100)  # half a second
        gym.refresh_actor_root_state_tensor(sim)
        print(json.dumps((root[:, 0] - torch.tensor(origins)).tolist()))
    """)
    # the average of 1 and the shape's 0, 0.5, 1: 0.5 slides (at (0.62 - 0.5) g: 0.15 m in
    # 0.5 s), 0.75 and 1 hold (MuJoCo alone takes the larger, 1: none would slide)
    slid, held, also_held = out
    assert slid == pytest.approx(0.5 * (0.62 - 0.5) * G * 0.25, abs=0.05)
    assert abs(held) < 0.01 and abs(also_held) < 0.01
