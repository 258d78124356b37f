"""The SDK fake's primitive assets (``create_box``, ``create_sphere``, ``create_capsule``),
run for real on its Python 3.8. Sources: docs/isaacgym.md ("Assets and utility modules of
the SDK fake")."""
from __future__ import annotations

import math

import pytest

from .test_isaacgym_fake_assets import fake


def test_primitive_assets_have_the_documented_extents_mass_and_options(
        isaacgym_fake_python: str) -> None:
    out = fake(isaacgym_fake_python, """
        import contextlib, io
        def options(**values):
            o = gymapi.AssetOptions()
            for name, value in values.items():
                setattr(o, name, value)
            return o

        gym, sim, robot = urdf_sim(QUADRUPED)
        light = options(density=10.0, thickness=0.0)
        assets = {"box": gym.create_box(sim, 0.4, 0.3, 0.2, light),
                  "sphere": gym.create_sphere(sim, 0.1, light),
                  "capsule": gym.create_capsule(sim, 0.05, 0.3, light),
                  "fixed": gym.create_box(sim, 0.2, 0.2, 0.2, options(fix_base_link=True)),
                  "default": gym.create_sphere(sim, 0.1)}
        env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 1)
        actors = {}
        for k, (name, asset) in enumerate(assets.items()):
            pose = gymapi.Transform()
            pose.p = gymapi.Vec3(2.0 * k, 0.0, 0.5)
            actors[name] = gym.create_actor(env, asset, pose, name, 0, 0)
        pose = gymapi.Transform()
        pose.p = gymapi.Vec3(12.0, 0.0, 0.5)
        # a file's actor beside them (IsaacGymEnvs' FrankaCubeStack: a URDF and boxes)
        gym.create_actor(env, robot, pose, "robot", 0, 0)
        masses = {name: gym.get_actor_rigid_body_properties(env, a)[0].mass
                  for name, a in actors.items()}
        counts = [[gym.get_asset_rigid_body_count(a), gym.get_asset_dof_count(a),
                   gym.get_asset_rigid_shape_count(a)] for a in assets.values()]
        assert gym.prepare_sim(sim)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        step(gym, sim, 400)
        gym.refresh_actor_root_state_tensor(sim)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            refused = [gym.create_box(sim, 0.0, 1.0, 1.0), gym.create_sphere(sim, -1.0),
                       gym.create_capsule(sim, 0.1, float("nan"))]
        print(json.dumps([masses, counts, root[:5, 2].tolist(), root[:5, 3:7].tolist(),
                          gym.get_asset_rigid_body_names(assets["box"]),
                          refused, stderr.getvalue()]))
    """)
    masses, counts, heights, quats, names, refused, message = out
    assert masses["box"] == pytest.approx(10.0 * 0.4 * 0.3 * 0.2, rel=1e-5)
    assert masses["sphere"] == pytest.approx(10.0 * 4 / 3 * math.pi * 0.1 ** 3, rel=1e-5)
    capsule = math.pi * 0.05 ** 2 * 0.3 + 4 / 3 * math.pi * 0.05 ** 3
    assert masses["capsule"] == pytest.approx(10.0 * capsule, rel=1e-5)
    assert masses["default"] == pytest.approx(1000.0 * 4 / 3 * math.pi * 0.1 ** 3, rel=1e-5)
    assert counts == [[1, 0, 1]] * 5 and names == ["box"]
    # at rest on the ground: depth along z, the capsule lying along x (its quaternion
    # unchanged), the fixed box where it was created, the default thickness 0.02 as a gap
    box, sphere, capsule_z, fixed, default = heights
    assert box == pytest.approx(0.1, abs=2e-3)
    assert sphere == pytest.approx(0.1, abs=2e-3)
    assert capsule_z == pytest.approx(0.05, abs=2e-3)
    assert quats[2] == pytest.approx([0.0, 0.0, 0.0, 1.0], abs=1e-3)
    assert fixed == pytest.approx(0.5, abs=1e-6)
    assert default == pytest.approx(0.12, abs=3e-3)
    assert refused == [None, None, None]
    assert "dimensions must be positive" in message and "create_capsule" in message


def test_an_env_of_fixed_actors_alone_steps_and_reports_their_root_states(
        isaacgym_fake_python: str) -> None:
    # A static scene (a fixed table, nothing else) is a model without a single joint; the
    # SDK steps it like any other and reports the actors' poses as root states.
    out = fake(isaacgym_fake_python, """
        gym, sim, _ = urdf_sim(QUADRUPED, ground=False)  # the sim; its asset goes unused
        options = gymapi.AssetOptions()
        options.fix_base_link = True
        table = gym.create_box(sim, 1.0, 0.6, 0.1, options)
        env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 1)
        pose = gymapi.Transform()
        pose.p = gymapi.Vec3(0.1, 0.2, 0.4)
        gym.create_actor(env, table, pose, "table", 0, 0)
        assert gym.prepare_sim(sim)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        step(gym, sim, 10)
        gym.refresh_actor_root_state_tensor(sim)
        print(json.dumps(root.tolist()))
    """)
    assert out[0][:7] == pytest.approx([0.1, 0.2, 0.4, 0.0, 0.0, 0.0, 1.0], abs=1e-6)
    assert out[0][7:] == pytest.approx([0.0] * 6, abs=1e-9)
