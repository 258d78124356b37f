"""The SDK fake's features for IsaacGymEnvs' manipulation and flying tasks, on Python 3.8.

Jacobian and mass-matrix tensors (FrankaCubeStack), body force tensors (Quadcopter,
Ingenuity, ShadowHand, AllegroHand), rigid transforms by env handle (FrankaCabinet),
attractors (BallBalance), fixed tendons (ShadowHand), and the assets MuJoCo refuses but
the SDK loads (Ingenuity, Trifinger). Each is checked against what physics or geometry
says it must be; sources in docs/isaacgym.md ("Assumptions of the SDK fake").
"""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

from .test_isaacgym_fake import run_fake

# A fixed base and a planar arm turning about z: link 1 (0.5 m, its mass 2 at 0.3 m,
# izz 0.05), link 2 (its mass 1 at 0.2 m, izz 0.02) and a massless tip 0.4 m along it.
ARM = """<mujoco><worldbody><body name="base" pos="0 0 1">
  <geom type="box" size="0.05 0.05 0.05" mass="1"/>
  <body name="l1"><joint name="j1" type="hinge" axis="0 0 1"/>
    <inertial pos="0.3 0 0" mass="2" diaginertia="0.03 0.03 0.05"/>
    <body name="l2" pos="0.5 0 0"><joint name="j2" type="hinge" axis="0 0 1"/>
      <inertial pos="0.2 0 0" mass="1" diaginertia="0.015 0.015 0.02"/>
      <body name="tip" pos="0.4 0 0">
        <inertial pos="0 0 0" mass="1e-6" diaginertia="1e-9 1e-9 1e-9"/></body>
</body></body></body></worldbody></mujoco>"""
# A 2 kg cube, 0.2 m a side: izz = 2 * (0.2^2 + 0.2^2) / 12
CUBE = """<mujoco><worldbody><body name="cube">
  <geom type="box" size="0.1 0.1 0.1" mass="2"/></body></worldbody></mujoco>"""
CUBE_IZZ = 2 * (0.04 + 0.04) / 12


def test_the_jacobian_and_mass_matrix_of_a_planar_arm_are_the_analytic_ones(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, f"""
        gym, sim, envs, _ = build({ARM!r}, num_envs=2, fixed=True, ground=False)
        jacobian = gymtorch.wrap_tensor(gym.acquire_jacobian_tensor(sim, "actor"))
        mass = gymtorch.wrap_tensor(gym.acquire_mass_matrix_tensor(sim, "actor"))
        assert gym.prepare_sim(sim)
        dofs = gymtorch.wrap_tensor(gym.acquire_dof_state_tensor(sim))
        state = torch.zeros_like(dofs)
        state[:, 0] = torch.tensor([0.3, 0.5, -0.7, 1.1])
        gym.simulate(sim)
        gym.set_dof_state_tensor(sim, gymtorch.unwrap_tensor(state))
        gym.refresh_dof_state_tensor(sim)
        gym.refresh_jacobian_tensors(sim)  # at the pose just set (FrankaCubeStack's reset)
        gym.refresh_mass_matrix_tensors(sim)
        print(json.dumps({{"q": dofs[:, 0].view(2, 2).tolist(), "jacobian": jacobian.tolist(),
                          "mass": mass.tolist()}}))
        """)
    jacobian, mass = out["jacobian"], out["mass"]
    assert [len(jacobian), len(jacobian[0]), len(jacobian[0][0]), len(jacobian[0][0][0])] \
        == [2, 3, 6, 2]  # fixed base: links less the root, 6 rows, DOFs
    for env, (q1, q2) in enumerate(out["q"]):
        s1, c1, s12, c12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
        tip = jacobian[env][2]
        expected = [[-0.5 * s1 - 0.4 * s12, -0.4 * s12], [0.5 * c1 + 0.4 * c12, 0.4 * c12],
                    [0, 0], [0, 0], [0, 0], [1, 1]]
        for row, want in zip(tip, expected, strict=True):
            assert row == [_approx(v) for v in want]
        link2 = jacobian[env][1]  # its origin is joint 2's axis: joint 2 does not move it
        assert link2[0] == [_approx(-0.5 * s1), _approx(0.0)]
        m11 = 0.05 + 2 * 0.3**2 + 0.02 + 1 * (0.5**2 + 0.2**2 + 2 * 0.5 * 0.2 * math.cos(q2))
        m12 = 0.02 + 1 * (0.2**2 + 0.5 * 0.2 * math.cos(q2))
        m22 = 0.02 + 1 * 0.2**2
        assert mass[env] == [[_approx(m11), _approx(m12)], [_approx(m12), _approx(m22)]]


def test_a_free_base_jacobian_has_the_roots_six_columns_first(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        gym, sim, envs, _ = build(HINGE, num_envs=1, ground=False)
        assert gym.prepare_sim(sim)
        jacobian = gymtorch.wrap_tensor(gym.acquire_jacobian_tensor(sim, "actor"))
        gym.refresh_jacobian_tensors(sim)
        print(json.dumps({"shape": list(jacobian.shape), "root": jacobian[0, 0].tolist(),
                          "arm": jacobian[0, 1, :, 6].tolist(),
                          "none": gym.acquire_jacobian_tensor(sim, "nobody") is None}))
        """)
    assert out["shape"] == [1, 2, 6, 1 + 6]
    assert out["root"] == [[_approx(1.0 if r == c else 0.0) for c in range(7)] for r in range(6)]
    assert out["arm"] == [_approx(v) for v in (0, 0, 0, 0, 0, 1)]  # the hinge turns it about z
    assert out["none"]


def test_a_body_force_accelerates_a_free_cube_at_f_over_m_for_one_simulate(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, f"""
        gym, sim, envs, _ = build({CUBE!r}, num_envs=2, ground=False, height=5.0)
        assert gym.prepare_sim(sim)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        force = torch.zeros(2, 3)
        force[:, 0] = torch.tensor([4.0, -6.0])
        torque = torch.zeros(2, 3)
        torque[1, 2] = 0.5
        assert gym.apply_rigid_body_force_tensors(sim, gymtorch.unwrap_tensor(force),
                                                  gymtorch.unwrap_tensor(torque),
                                                  gymapi.ENV_SPACE)
        gym.simulate(sim)
        gym.refresh_actor_root_state_tensor(sim)
        once = root[:, 7:13].tolist()
        gym.simulate(sim)  # no call this step: no force
        gym.refresh_actor_root_state_tensor(sim)
        print(json.dumps({{"once": once, "twice": root[:, 7:13].tolist()}}))
        """)
    dt = 0.01
    (v0, w0), (v1, w1) = [(row[0:3], row[3:6]) for row in out["once"]]
    assert v0[0] == _approx(4.0 / 2 * dt) and v1[0] == _approx(-6.0 / 2 * dt)
    assert w1[2] == _approx(0.5 / CUBE_IZZ * dt) and w0[2] == _approx(0.0)
    assert [row[0] for row in out["twice"]] == [_approx(v0[0]), _approx(v1[0])]
    assert out["twice"][1][5] == _approx(w1[2])


def test_local_space_forces_turn_with_the_body_and_off_centre_ones_add_torque(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, f"""
        import math
        gym, sim, envs, _ = build({CUBE!r}, num_envs=1, ground=False, height=5.0)
        assert gym.prepare_sim(sim)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        turned = root.clone()
        turned[0, 3:7] = torch.tensor([0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)])
        gym.set_actor_root_state_tensor(sim, gymtorch.unwrap_tensor(turned))
        gym.simulate(sim)
        gym.refresh_actor_root_state_tensor(sim)
        before = root[0, 7:13].clone()
        local = torch.tensor([[2.0, 0.0, 0.0]])  # the body's x: the world's y, turned 90 deg
        gym.apply_rigid_body_force_tensors(sim, gymtorch.unwrap_tensor(local), None,
                                           gymapi.LOCAL_SPACE)
        gym.simulate(sim)
        gym.refresh_actor_root_state_tensor(sim)
        after_local = root[0, 7:13].clone()
        position = root[0:1, 0:3].clone()
        position[0, 0] += 0.1  # 0.1 m along x from the centre, in the env frame
        push = torch.tensor([[0.0, 3.0, 0.0]])
        gym.apply_rigid_body_force_at_pos_tensors(sim, gymtorch.unwrap_tensor(push),
                                                  gymtorch.unwrap_tensor(position),
                                                  gymapi.ENV_SPACE)
        gym.simulate(sim)
        gym.refresh_actor_root_state_tensor(sim)
        print(json.dumps({{"local": (after_local - before).tolist(),
                          "at_pos": (root[0, 7:13] - after_local).tolist()}}))
        """)
    dt = 0.01
    local, at_pos = out["local"], out["at_pos"]
    assert local[0] == _approx(0.0) and local[1] == _approx(2.0 / 2 * dt)
    assert at_pos[1] == _approx(3.0 / 2 * dt)  # the force moves the centre as at the centre
    assert at_pos[5] == _approx(0.1 * 3.0 / CUBE_IZZ * dt)  # and turns it: r x F about z


def test_rigid_handles_index_the_env_and_transforms_are_in_the_env_frame(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        gym = gymapi.acquire_gym()
        params = gymapi.SimParams()
        params.up_axis = gymapi.UP_AXIS_Z
        sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
        box = load(gym, sim, BOX, gymapi.AssetOptions())
        cube = gym.create_box(sim, 0.2, 0.2, 0.2, gymapi.AssetOptions())
        handles, transforms = [], []
        for index in range(2):
            env = gym.create_env(sim, gymapi.Vec3(-2, -2, 0), gymapi.Vec3(2, 2, 2), 2)
            pose = gymapi.Transform(gymapi.Vec3(0.0, 0.0, 1.0))
            gym.create_actor(env, box, pose, "box", index, 0)
            other = gymapi.Transform(gymapi.Vec3(0.5, 0.3, 2.0),
                                     gymapi.Quat.from_axis_angle(gymapi.Vec3(0, 0, 1), 0.5))
            actor = gym.create_actor(env, cube, other, "cube", index, 0)
            name = gym.get_actor_rigid_body_names(env, actor)[0]
            handle = gym.find_actor_rigid_body_handle(env, actor, name)
            handles.append([handle, gym.get_rigid_handle(env, "cube", name) == handle,
                            gym.get_rigid_name(env, handle) == name])
            t = gym.get_rigid_transform(env, handle)
            transforms.append([t.p.x, t.p.y, t.p.z, t.r.x, t.r.y, t.r.z, t.r.w])
        assert gym.prepare_sim(sim)
        bodies = gymtorch.wrap_tensor(gym.acquire_rigid_body_state_tensor(sim))
        origins = [gym.get_env_origin(e) for e in [gym.get_env(sim, i) for i in range(2)]]
        print(json.dumps({"handles": handles, "transforms": transforms,
                          "rows": bodies.view(2, -1, 13)[:, 2, 0:7].tolist(),
                          "origins": [[o.x, o.y, o.z] for o in origins],
                          "bad": gym.get_rigid_transform(env, 7) is None}))
        """)
    assert out["handles"] == [[2, True, True], [2, True, True]]  # after the box's 2 bodies
    half = math.sin(0.25), math.cos(0.25)
    for transform, row, origin in zip(out["transforms"], out["rows"], out["origins"],
                                      strict=True):
        assert transform == [_approx(v) for v in (0.5, 0.3, 2.0, 0, 0, *half)]
        assert [a - b for a, b in zip(row[0:3], origin, strict=True)] == \
            [_approx(v) for v in transform[0:3]]
    assert out["origins"][1] != out["origins"][0]
    assert out["bad"]


def test_an_attractor_holds_a_body_at_its_target_pose_and_follows_set_attractor_target(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, f"""
        import math
        params = gymapi.SimParams()
        params.up_axis = gymapi.UP_AXIS_Z
        params.dt, params.substeps = 0.01, 2
        params.gravity = gymapi.Vec3(0.0, 0.0, -9.81)
        gym = gymapi.acquire_gym()
        sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
        cube = load(gym, sim, {CUBE!r}, gymapi.AssetOptions())
        envs, handles = [], []
        for index, axes in enumerate([gymapi.AXIS_TRANSLATION, gymapi.AXIS_ALL, 0]):
            env = gym.create_env(sim, gymapi.Vec3(-2, -2, 0), gymapi.Vec3(2, 2, 2), 3)
            gym.create_actor(env, cube, gymapi.Transform(gymapi.Vec3(0, 0, 1)), "cube", index)
            props = gymapi.AttractorProperties()
            props.stiffness, props.damping, props.axes = 5e7, 5e3, axes
            props.rigid_handle = gym.find_actor_rigid_body_handle(env, 0, "cube")
            props.offset.p = gymapi.Vec3(0.1, 0.0, 0.0)  # a point on the cube's face
            props.target = gymapi.Transform(
                gymapi.Vec3(0.3, -0.2, 1.5),
                gymapi.Quat.from_axis_angle(gymapi.Vec3(0, 0, 1), math.pi / 2))
            handles.append(gym.create_rigid_body_attractor(env, props))
            envs.append(env)
        assert gym.prepare_sim(sim)
        def settle():
            for _ in range(200):
                gym.simulate(sim)
            frames = [gym.get_rigid_transform(env, 0) for env in envs]
            points = [t.transform_point(gymapi.Vec3(0.1, 0.0, 0.0)) for t in frames]
            return [[t.p.x, t.p.y, t.p.z, t.r.x, t.r.y, t.r.z, t.r.w, p.x, p.y, p.z]
                    for t, p in zip(frames, points)]
        first = settle()
        moved = gymapi.Transform(gymapi.Vec3(-0.4, 0.2, 1.2))
        gym.set_attractor_target(envs[0], handles[0], moved)
        second = settle()
        print(json.dumps({{"handles": handles, "first": first, "second": second,
                          "target": gym.get_attractor_properties(envs[0], 0).target.p.x}}))
        """)
    assert out["handles"] == [0, 0, 0]
    translation, whole, disabled = out["first"]
    # translation only: the offset point (0.1 m along the cube's x) at the target; the
    # cube swings about it
    assert math.dist(translation[7:10], (0.3, -0.2, 1.5)) < 0.005
    # all axes: the offset frame at the target, turned 90 deg about z: the centre 0.1 m
    # along -y from the target
    assert math.dist(whole[0:3], (0.3, -0.3, 1.5)) < 0.005
    assert abs(whole[5]) == _approx(math.sin(math.pi / 4))  # the quaternion's z
    assert disabled[2] < 0.0  # axes 0: no pull, it falls
    assert math.dist(out["second"][0][7:10], (-0.4, 0.2, 1.2)) < 0.005
    assert out["target"] == _approx(-0.4)


# Two hinges coupled by a fixed tendon: length q_a - q_b, held near 0 by its limits; a
# spatial tendon, which the importer drops.
COUPLED = """<mujoco><worldbody><body name="base" pos="0 0 1">
  <geom type="box" size="0.05 0.05 0.05" mass="1"/><site name="s1"/>
  <site name="s2" pos="0 0 0.1"/>
  <body name="a"><joint name="ja" type="hinge" axis="0 0 1"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.2"/></body>
  <body name="b" pos="0 0 0.2"><joint name="jb" type="hinge" axis="0 0 1"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.2"/></body>
</body></worldbody>
<tendon><fixed name="couple" limited="true" range="-0.001 0.001" damping="0.001">
  <joint joint="ja" coef="1"/><joint joint="jb" coef="-1"/></fixed>
  <spatial name="rope"><site site="s1"/><site site="s2"/></spatial></tendon></mujoco>"""


def test_a_fixed_tendon_couples_its_joints_as_its_properties_say(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, f"""
        results = {{}}
        for limit_stiffness in (1e4, 0.0):
            params = gymapi.SimParams()
            params.up_axis = gymapi.UP_AXIS_Z
            params.dt, params.substeps = 0.01, 2
            params.gravity = gymapi.Vec3(0.0, 0.0, -9.81)
            gym = gymapi.acquire_gym()
            sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
            options = gymapi.AssetOptions()
            options.fix_base_link = True
            asset = load(gym, sim, {COUPLED!r}, options)
            props = gym.get_asset_tendon_properties(asset)
            imported = [gym.get_asset_tendon_count(asset), gym.get_asset_tendon_name(asset, 0),
                        props[0].is_fixed_limited, props[0].fixed_lower_limit,
                        props[0].fixed_upper_limit, props[0].damping, props[0].limit_stiffness,
                        props[0].num_joints, props[0].type == gymapi.TENDON_FIXED]
            props[0].limit_stiffness = limit_stiffness
            assert gym.set_asset_tendon_properties(asset, props)
            env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 1)
            actor = gym.create_actor(env, asset, gymapi.Transform(), "coupled", 0, 1)
            dof_props = gym.get_actor_dof_properties(env, actor)
            dof_props["driveMode"][:] = gymapi.DOF_MODE_EFFORT
            gym.set_actor_dof_properties(env, actor, dof_props)
            assert gym.prepare_sim(sim)
            dofs = gymtorch.wrap_tensor(gym.acquire_dof_state_tensor(sim))
            effort = torch.tensor([0.05, 0.0])
            for _ in range(50):
                gym.set_dof_actuation_force_tensor(sim, gymtorch.unwrap_tensor(effort))
                gym.simulate(sim)
            gym.refresh_dof_state_tensor(sim)
            results[str(limit_stiffness)] = {{
                "imported": imported, "q": dofs[:, 0].tolist(),
                "actor": [gym.get_actor_tendon_count(env, actor),
                          gym.get_actor_tendon_properties(env, actor)[0].limit_stiffness]}}
            gym.destroy_sim(sim)
        print(json.dumps(results))
        """)
    stiff, slack = out["10000.0"], out["0.0"]
    assert stiff["imported"] == [1, "couple", True, _approx(-0.001), _approx(0.001),
                                 _approx(0.001), _approx(1.0), 2, True]
    assert stiff["actor"] == [1, _approx(1e4)]
    qa, qb = stiff["q"]
    assert qa > 0.1 and abs(qa - qb) < 0.2 * qa  # the tendon drags b along with a
    qa, qb = slack["q"]
    assert qa > 0.1 and abs(qb) < 0.2 * qa  # no limit spring: b barely moves


def test_assets_mujoco_refuses_load_as_the_sdk_loads_them(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    (tmp_path / "flyer.xml").write_text(textwrap.dedent("""
        <mujoco><asset><mesh name="shell" file="shell.glb"/></asset><worldbody>
          <body name="hull"><joint name="root_joint" type="hinge" limited="true" range="0 0"/>
            <geom type="box" size="0.1 0.1 0.1" mass="1"/>
            <geom type="mesh" mesh="shell" contype="0" conaffinity="0"/>
            <body name="rotor"><joint name="spin" type="hinge" limited="true" range="0 0"/>
              <geom type="cylinder" size="0.2 0.01" mass="0.1"/></body>
            <body name="rotor_look"><joint name="spin" type="hinge" axis="0 0 1"/>
              <geom type="mesh" mesh="shell" contype="0" conaffinity="0"/></body>
          </body></worldbody></mujoco>"""))
    (tmp_path / "finger.urdf").write_text(textwrap.dedent("""
        <robot name="finger"><link name="base"><inertial><mass value="1"/>
          <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
          <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
        <link name="tip">
          <inertial><mass value="0.031"/><inertia ixx="1e-6" iyy="1e-6" izz="1e-6" ixy="0"
            ixz="0" iyz="0"/></inertial>
          <inertial><mass value="0.5"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0"
            ixz="0" iyz="0"/></inertial>
          <collision><geometry><sphere radius="0.02"/></geometry></collision></link>
        <link name="pad"><inertial><mass value="0.01"/><inertia ixx="1e-7" iyy="1e-7"
          izz="1e-7" ixy="0" ixz="0" iyz="0"/></inertial></link>
        <joint name="bend" type="revolute"><parent link="base"/><child link="tip"/>
          <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
          <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
        <joint name="pad_joint" type="fixed"><parent link="tip"/><child link="pad"/>
          <origin xyz="0 0 0.02"/></joint></robot>"""))
    out = run_fake(isaacgym_fake_python, f"""
        gym = gymapi.acquire_gym()
        params = gymapi.SimParams()
        params.up_axis = gymapi.UP_AXIS_Z
        sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
        flyer = gym.load_asset(sim, {str(tmp_path)!r}, "flyer.xml", gymapi.AssetOptions())
        finger = gym.load_asset(sim, {str(tmp_path)!r}, "finger.urdf", gymapi.AssetOptions())
        env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 1)
        gym.create_actor(env, finger, gymapi.Transform(), "finger", 0)
        masses = [p.mass for p in gym.get_actor_rigid_body_properties(env, 0)]
        print(json.dumps({{"dofs": gym.get_asset_dof_names(flyer),
                          "bodies": gym.get_asset_rigid_body_count(flyer),
                          "finger": masses, "joints": gym.get_actor_joint_dict(env, 0),
                          "finger_dofs": gym.get_asset_dof_names(finger)}}))
        """)
    assert out["dofs"] == ["spin", "spin_1"]  # both joints, the root's hinge not a DOF
    assert out["bodies"] == 3
    assert out["finger"] == [_approx(1.0), _approx(0.031), _approx(0.01)]  # the first counts
    # the SDK's joints: one per body but the root, the fixed one too (FrankaCubeStack's
    # Jacobian index), while the DOFs are the movable ones
    assert out["joints"] == {"bend": 0, "pad_joint": 1}
    assert out["finger_dofs"] == ["bend"]


def test_struct_floats_store_floats_as_pybind11_does(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        import numpy as np
        props = gymapi.RigidBodyProperties()
        props.mass = np.array([2.5], dtype=np.float32)  # IsaacGymEnvs' ADR samples so
        shape = gymapi.RigidShapeProperties()
        shape.friction = np.float64(0.7)
        print(json.dumps([type(props.mass).__name__, props.mass,
                          type(shape.friction).__name__]))
        """)
    assert out == ["float", 2.5, "float"]


def _approx(value: float) -> object:
    import pytest

    return pytest.approx(value, abs=2e-4, rel=2e-3)
