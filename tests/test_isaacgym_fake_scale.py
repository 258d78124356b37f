"""The SDK fake's ``set_actor_scale``, run for real on its Python 3.8: PhysX's
``PxScaleRigidActor`` with its mass properties (lengths times the scale, mass times its
cube, inertia times its fifth power), relative to the asset. Sources: docs/isaacgym.md
("Assets and utility modules of the SDK fake")."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .test_isaacgym_fake_assets import MODELS, fake

# Helpers on the fake: a sim on a ground plane with a box asset that rests without a contact
# gap; ``heights`` steps 1.5 s and returns the heights of the env's actors' first bodies.
SETTLE = """
def box_sim(size=0.2):
    gym, sim, _ = urdf_sim(QUADRUPED)
    options = gymapi.AssetOptions()
    options.thickness = 0.0  # no contact gap: rest heights are the boxes' half sizes
    return gym, sim, gym.create_box(sim, size, size, size, options)

def place(gym, env, asset, x, z, name):
    pose = gymapi.Transform()
    pose.p = gymapi.Vec3(x, 0.0, z)
    return gym.create_actor(env, asset, pose, name, 0, 0)

def heights(gym, sim, env):
    step(gym, sim, 300)
    return [gym.get_rigid_transform(env, gym.get_actor_rigid_body_handle(env, a, 0)).p.z
            for a in range(gym.get_actor_count(env))]

def mass_props(gym, env, actor):
    props = gym.get_actor_rigid_body_properties(env, actor)
    return [[p.mass, p.inertia.x.x, p.inertia.y.y, p.inertia.z.z, p.com.z] for p in props]
"""


def cube_urdf() -> str:
    """A URDF of a 0.2 m cube mesh (tests/models' unit cube about its centre, scaled)."""
    mesh = MODELS / "fake_pkg" / "meshes" / "cube.obj"
    return ('<robot name="cube"><link name="cube"><inertial><mass value="1"/><inertia '
            'ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial><collision>'
            f'<geometry><mesh filename="{mesh}" scale="0.2 0.2 0.2"/></geometry></collision>'
            '</link></robot>')


def scale_fake(python: str, code: str) -> list:
    return fake(python, SETTLE + textwrap.dedent(code))


def test_a_scaled_box_rests_at_its_scaled_size_with_scaled_mass_properties(
        isaacgym_fake_python: str) -> None:
    out = scale_fake(isaacgym_fake_python, """
        gym, sim, asset = box_sim()
        env = gym.create_env(sim, gymapi.Vec3(-2, -2, 0), gymapi.Vec3(2, 2, 1), 1)
        plain = place(gym, env, asset, 0.0, 0.5, "plain")
        big = place(gym, env, asset, 1.0, 0.5, "big")
        before = mass_props(gym, env, big)
        done = gym.set_actor_scale(env, big, 2.0)
        scaled = [gym.get_actor_scale(env, a) for a in (plain, big)], mass_props(gym, env, big)
        assert gym.prepare_sim(sim)
        rest = heights(gym, sim, env)
        back = gym.set_actor_scale(env, big, 1.0)
        restored = gym.get_actor_scale(env, big), mass_props(gym, env, big), heights(gym, sim, env)
        print(json.dumps([done, before, scaled, rest, back, restored]))
    """)
    done, before, (scales, after), rest, back, (scale, restored, rest_again) = out
    assert done and back and scales == [1.0, 2.0] and scale == 1.0
    (mass, ixx, iyy, izz, com), = before
    assert after == [pytest.approx([8 * mass, 32 * ixx, 32 * iyy, 32 * izz, 2 * com])]
    assert rest[0] == pytest.approx(0.1, abs=2e-3)
    assert rest[1] == pytest.approx(2 * rest[0], abs=3e-3)
    assert restored == before  # absolute: the asset's own again
    assert rest_again[1] == pytest.approx(rest[0], abs=2e-3)


def test_a_scaled_articulation_has_its_links_at_scaled_offsets(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    link = ('<link name="{}"><inertial><origin xyz="0 0 0.05"/><mass value="1"/><inertia '
            'ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial><collision>'
            '<geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>')
    (tmp_path / "arm.urdf").write_text(
        '<robot name="arm">' + link.format("base") + link.format("tip")
        + '<joint name="swing" type="revolute"><parent link="base"/><child link="tip"/>'
          '<origin xyz="0.4 0.0 0.2"/><axis xyz="0 0 1"/>'
          '<limit lower="-1" upper="1" effort="10" velocity="5"/></joint></robot>')
    out = fake(isaacgym_fake_python, f"""
        gym, sim, asset = urdf_sim("arm.urdf", ground=False, root={str(tmp_path)!r},
                                   fix_base_link=True)
        envs, offsets = [], []
        for scale in (1.0, 0.5):
            env, actor = one_actor(gym, sim, asset, 1.0)
            assert gym.set_actor_scale(env, actor, scale)
            envs.append(env)
        assert gym.prepare_sim(sim)
        bodies = gymtorch.wrap_tensor(gym.acquire_rigid_body_state_tensor(sim))
        step(gym, sim, 2)
        gym.refresh_rigid_body_state_tensor(sim)
        rows = bodies.view(2, 2, 13)
        coms = [gym.get_actor_rigid_body_properties(env, 0)[1].com.z for env in envs]
        print(json.dumps([(rows[:, 1, 0:3] - rows[:, 0, 0:3]).tolist(), rows[:, 0, 2].tolist(),
                          coms]))
    """)
    offsets, roots, coms = out
    assert offsets[0] == pytest.approx([0.4, 0.0, 0.2], abs=1e-6)
    assert offsets[1] == pytest.approx([0.2, 0.0, 0.1], abs=1e-6)
    assert roots == pytest.approx([1.0, 1.0])  # the root's pose is not scaled
    assert coms == pytest.approx([0.05, 0.025])


def test_a_scaled_mesh_collides_at_its_scaled_size(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    (tmp_path / "cube.urdf").write_text(cube_urdf())
    out = scale_fake(isaacgym_fake_python, f"""
        gym, sim, asset = urdf_sim("cube.urdf", root={str(tmp_path)!r}, thickness=0.0)
        env = gym.create_env(sim, gymapi.Vec3(-2, -2, 0), gymapi.Vec3(2, 2, 1), 1)
        place(gym, env, asset, 0.0, 0.5, "plain")
        assert gym.set_actor_scale(env, place(gym, env, asset, 1.0, 0.5, "big"), 2.0)
        assert gym.prepare_sim(sim)
        print(json.dumps(heights(gym, sim, env)))
    """)
    # the other actor's copy of the mesh keeps its size
    assert out[0] == pytest.approx(0.1, abs=2e-3)
    assert out[1] == pytest.approx(0.2, abs=3e-3)


def test_a_camera_sees_a_scaled_mesh_at_its_scale(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    (tmp_path / "cube.urdf").write_text(cube_urdf())
    out = fake(isaacgym_fake_python, f"""
        gym = gymapi.acquire_gym()
        params = gymapi.SimParams()
        params.up_axis = gymapi.UP_AXIS_Z
        sim = gym.create_sim(0, 0, gymapi.SIM_PHYSX, params)
        asset = gym.load_asset(sim, {str(tmp_path)!r}, "cube.urdf", gymapi.AssetOptions())
        env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 1)
        actor = gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(0, 0, 0.5)), "cube")
        properties = gymapi.CameraProperties()
        properties.width = properties.height = 33
        camera = gym.create_camera_sensor(env, properties)
        gym.set_camera_location(camera, env, gymapi.Vec3(1.5, 0, 0.5), gymapi.Vec3(0, 0, 0.5))
        depths = []
        for scale in (1.0, 2.0):  # no simulate: the second after the camera rendered the first
            assert gym.set_actor_scale(env, actor, scale)
            gym.step_graphics(sim)
            gym.render_all_camera_sensors(sim)
            depths.append(float(gym.get_camera_image(sim, env, camera, gymapi.IMAGE_DEPTH)[16, 16]))
        gym.destroy_sim(sim)
        print(json.dumps(depths))
    """)
    # the cube's near face, 0.1 m then 0.2 m before its centre (depth is negative)
    assert out == pytest.approx([-1.4, -1.3], abs=1e-3)


def test_a_scale_survives_another_actor_joining_the_env(isaacgym_fake_python: str) -> None:
    out = scale_fake(isaacgym_fake_python, """
        gym, sim, asset = box_sim()
        env = gym.create_env(sim, gymapi.Vec3(-2, -2, 0), gymapi.Vec3(2, 2, 1), 1)
        big = place(gym, env, asset, 0.0, 0.5, "big")
        plain_mass = mass_props(gym, env, big)[0][0]
        assert gym.set_actor_scale(env, big, 2.0)
        place(gym, env, asset, 1.0, 0.5, "plain")  # the env's model is built again
        assert gym.prepare_sim(sim)
        print(json.dumps([gym.get_actor_scale(env, big), plain_mass,
                          mass_props(gym, env, big)[0][0], heights(gym, sim, env)]))
    """)
    scale, plain_mass, mass, (big, plain) = out
    assert scale == 2.0 and mass == pytest.approx(8 * plain_mass)
    assert big == pytest.approx(0.2, abs=3e-3) and plain == pytest.approx(0.1, abs=2e-3)


def test_a_scale_that_is_not_positive_and_finite_is_refused(isaacgym_fake_python: str) -> None:
    out = scale_fake(isaacgym_fake_python, """
        import contextlib, io
        gym, sim, asset = box_sim()
        env = gym.create_env(sim, gymapi.Vec3(-2, -2, 0), gymapi.Vec3(2, 2, 1), 1)
        actor = place(gym, env, asset, 0.0, 0.5, "box")
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            refused = [gym.set_actor_scale(env, actor, s) for s in (0.0, -1.0, float("nan"))]
        print(json.dumps([refused, gym.get_actor_scale(env, actor), stderr.getvalue()]))
    """)
    refused, scale, message = out
    assert refused == [False, False, False] and scale == 1.0
    assert message.count("set_actor_scale") == 3
    assert "not a positive finite number" in message and "pass a scale > 0" in message
