"""The SDK fake's asset import, run for real on its Python 3.8.

URDF through MuJoCo's URDF compiler with IsaacGym's asset options (tests/models/fake_pkg,
our own robot: fixed links to collapse, feet kept by ``dont_collapse``, meshes by
``package://`` and relative paths, inertia only PhysX accepts), and MJCF files MuJoCo
alone refuses. The utility modules: test_isaacgym_fake_utils.py. Each behaviour's source
is in docs/isaacgym.md ("Assets and utility modules of the SDK fake").
"""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from .test_isaacgym_fake import run_fake

MODELS = Path(__file__).resolve().parent / "models"
LEGS = ("LF", "LH", "RF", "RH")  # the SDK's order: links by name (the URDF has LF, RF, ...)

# A sim on the fake, Z up, ground at z = 0, and the URDF asset of ``file`` under
# tests/models loaded with ``options`` (AssetOptions fields).
PRELUDE = f"""
MODELS = {str(MODELS)!r}

def urdf_sim(file, ground=True, root=MODELS, **options):
    gym = gymapi.acquire_gym()
    params = gymapi.SimParams()
    params.dt, params.substeps = 0.005, 1
    params.up_axis = gymapi.UP_AXIS_Z
    params.gravity = gymapi.Vec3(0.0, 0.0, -9.81)
    sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
    if ground:
        plane = gymapi.PlaneParams()
        plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
        gym.add_ground(sim, plane)
    asset_options = gymapi.AssetOptions()
    for name, value in options.items():
        setattr(asset_options, name, value)
    return gym, sim, gym.load_asset(sim, root, file, asset_options)

def one_actor(gym, sim, asset, height):
    env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 1)
    pose = gymapi.Transform()
    pose.p = gymapi.Vec3(0.0, 0.0, height)
    return env, gym.create_actor(env, asset, pose, "robot", 0, 0)

QUADRUPED = "fake_pkg/urdf/fake_quadruped.urdf"
"""


def fake(python: str, code: str) -> Any:
    return run_fake(python, PRELUDE + textwrap.dedent(code))


def test_urdf_limits_become_the_dof_properties(isaacgym_fake_python: str) -> None:
    out = fake(isaacgym_fake_python, """
        gym, sim, asset = urdf_sim(QUADRUPED, default_dof_drive_mode=gymapi.DOF_MODE_EFFORT,
                                   armature=0.02, flip_visual_attachments=True)
        props = gym.get_asset_dof_properties(asset)
        print(json.dumps({"names": gym.get_asset_dof_names(asset),
                          **{f: props[f].tolist() for f in ("effort", "velocity", "lower",
                             "upper", "hasLimits", "driveMode", "armature", "friction")}}))
    """)
    assert out["names"] == [f"{leg}_{joint}" for leg in LEGS for joint in ("hip", "knee")]
    assert out["effort"] == [20.0, 25.0] * 4  # legged_gym's torque_limits
    assert out["velocity"] == [15.0, 12.0] * 4
    assert out["lower"] == [-1.0, -2.0] * 4 and out["upper"] == [1.0, 0.0] * 4
    assert out["hasLimits"] == [True] * 8
    assert out["driveMode"] == [3] * 8  # DOF_MODE_EFFORT, the asset options' default mode
    assert out["armature"] == pytest.approx([0.02] * 8)
    assert out["friction"] == pytest.approx([0.05, 0.0] * 4)  # URDF <dynamics friction>


def test_joints_without_a_range_have_no_limits_but_keep_effort(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    # anymal_c's drives: revolute with effort and velocity only; and a continuous joint
    link = ('<link name="{}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" '
            'izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    joint = ('<joint name="{0}" type="{1}"><parent link="a"/><child link="{0}_link"/>'
             '<axis xyz="0 0 1"/><limit effort="{2}" velocity="{3}"/></joint>')
    (tmp_path / "free.urdf").write_text('<robot name="free">' + link.format("a") + "".join(
        link.format(name + "_link") + joint.format(name, kind, effort, velocity)
        for name, kind, effort, velocity in (("drive", "revolute", 80, 20),
                                             ("wheel", "continuous", 5, 30))) + "</robot>")
    out = fake(isaacgym_fake_python, f"""
        gym, sim, asset = urdf_sim("free.urdf", root={str(tmp_path)!r})
        props = gym.get_asset_dof_properties(asset)
        print(json.dumps({{f: props[f].tolist() for f in ("hasLimits", "lower", "upper",
                                                          "effort", "velocity")}}))
    """)
    assert out == {"hasLimits": [False, False], "lower": [0.0, 0.0], "upper": [0.0, 0.0],
                   "effort": [80.0, 5.0], "velocity": [20.0, 30.0]}


def test_collapse_fixed_joints_merges_links_but_keeps_dont_collapse(
        isaacgym_fake_python: str) -> None:
    out = fake(isaacgym_fake_python, """
        result = {}
        for collapse in (True, False):
            gym, sim, asset = urdf_sim(QUADRUPED, collapse_fixed_joints=collapse, density=500.0)
            env, actor = one_actor(gym, sim, asset, 1.0)
            bodies = gym.get_actor_rigid_body_properties(env, actor)
            result[str(collapse)] = {"names": gym.get_asset_rigid_body_names(asset),
                                     "masses": [b.mass for b in bodies]}
        print(json.dumps(result))
    """)
    collapsed, kept = out["True"], out["False"]
    legs = [f"{leg}_{link}" for leg in LEGS for link in ("thigh", "shank", "foot")]
    assert collapsed["names"] == ["base", *legs]  # feet: dont_collapse="true"
    assert kept["names"] == ["base", *[  # siblings by name, in byte order: "LF" < "imu"
        f"{leg}_{link}" for leg in LEGS for link in ("mount", "thigh", "shank", "foot")],
        "imu", "plate"]
    # the base carries what was merged into it: the imu's 0.01 kg and the plate's mesh
    # (0.1 x 0.1 x 0.02 m at density 500: 0.1 kg, the links without <inertial>)
    plate = kept["masses"][kept["names"].index("plate")]
    assert plate == pytest.approx(0.1, rel=1e-3)
    assert collapsed["masses"][0] == pytest.approx(4.0 + 0.01 + 0.1, abs=1e-4)
    assert sum(collapsed["masses"]) == pytest.approx(sum(kept["masses"]), rel=1e-6)


def test_collapse_adds_mass_and_inertia_as_mujocos_own_fusion_does(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    # with no dont_collapse, merging must equal MuJoCo's fusestatic on a floating base;
    # the one tensor MuJoCo cannot take as written (the imu's) is made diagonal in both
    urdf = (MODELS / "fake_pkg" / "urdf" / "fake_quadruped.urdf").read_text()
    urdf = urdf.replace(' dont_collapse="true"', "").replace(
        'ixy="0.001" ixz="0.001" iyy="0.001" iyz="0.001"', 'ixy="0" ixz="0" iyy="0.001" iyz="0"')
    urdf = urdf.replace("package://fake_pkg/meshes", str(MODELS / "fake_pkg" / "meshes"))
    urdf = urdf.replace("../meshes", str(MODELS / "fake_pkg" / "meshes"))
    urdf = urdf.replace('"fake_pkg/meshes', '"' + str(MODELS / "fake_pkg" / "meshes"))
    (tmp_path / "robot.urdf").write_text(urdf)
    reference = urdf.replace('<robot name="fake_quadruped">', (
        '<robot name="fake_quadruped"><mujoco><compiler fusestatic="true" strippath="false" '
        'balanceinertia="true" boundmass="1e-6" boundinertia="1e-9"/>'
        '</mujoco><link name="world"/><joint name="float" type="floating">'
        '<parent link="world"/><child link="base"/></joint>'))
    out = fake(isaacgym_fake_python, f"""
        import mujoco
        import numpy as np
        reference = mujoco.MjModel.from_xml_string({reference!r})
        gym, sim, asset = urdf_sim("robot.urdf", root={str(tmp_path)!r},
                                   collapse_fixed_joints=True)
        env, actor = one_actor(gym, sim, asset, 1.0)
        names = gym.get_asset_rigid_body_names(asset)
        result = {{"names": [names, [reference.body(b).name for b in range(1, reference.nbody)]]}}
        for name, props in zip(names, gym.get_actor_rigid_body_properties(env, actor)):
            rows = [props.inertia.x, props.inertia.y, props.inertia.z]
            tensor = np.array([[row.x, row.y, row.z] for row in rows])
            body = reference.body(name)
            com = [props.com.x, props.com.y, props.com.z]
            result[name] = [[props.mass, *com, *sorted(np.linalg.eigvalsh(tensor))],
                            [float(body.mass[0]), *body.ipos, *sorted(body.inertia)]]
        print(json.dumps(result))
    """)
    ours, theirs = out.pop("names")
    assert ours == ["base", *[f"{leg}_{link}" for leg in LEGS for link in ("thigh", "shank")]]
    assert sorted(theirs) == sorted(ours)  # MuJoCo keeps the URDF's order
    for name, (mass_centre_inertia, reference) in out.items():
        assert mass_centre_inertia == pytest.approx(reference, rel=1e-5, abs=1e-9), name


def test_inertia_physx_accepts_loads_and_simulates(isaacgym_fake_python: str) -> None:
    # the imu's tensor is not positive definite, RH_shank's is zero, LF_shank's breaks the
    # triangle inequality: MuJoCo refuses each as written, PhysX loads them
    out = fake(isaacgym_fake_python, """
        result = {}
        for collapse in (True, False):
            gym, sim, asset = urdf_sim(QUADRUPED, collapse_fixed_joints=collapse)
            one_actor(gym, sim, asset, 0.6)
            assert gym.prepare_sim(sim)
            root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
            step(gym, sim, 200)
            gym.refresh_actor_root_state_tensor(sim)
            result[str(collapse)] = root[0].tolist()
        print(json.dumps(result))
    """)
    for root in out.values():
        assert all(abs(v) < 1e3 for v in root)  # finite (NaN fails the comparison)
        assert 0.05 < root[2] < 0.6  # fell, and stands on its legs or lies on the ground


def test_a_mass_without_inertia_gets_its_shapes_inertia(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    # IsaacGymEnvs' cartpole.urdf: <inertial> with a <mass> only, which MuJoCo refuses
    (tmp_path / "cart.urdf").write_text(
        '<robot name="cart"><link name="cart"><inertial><mass value="2"/></inertial>'
        '<collision><geometry><box size="0.2 0.4 0.6"/></geometry></collision></link></robot>')
    out = fake(isaacgym_fake_python, f"""
        gym, sim, asset = urdf_sim("cart.urdf", root={str(tmp_path)!r}, density=50.0)
        env, actor = one_actor(gym, sim, asset, 1.0)
        body, = gym.get_actor_rigid_body_properties(env, actor)
        print(json.dumps([body.mass, body.inertia.x.x, body.inertia.y.y, body.inertia.z.z]))
    """)
    moments = [2.0 / 12 * (a * a + b * b) for a, b in ((0.4, 0.6), (0.2, 0.6), (0.2, 0.4))]
    assert out == pytest.approx([2.0, *moments], rel=1e-5)  # a 2 kg box's, whatever density


def test_meshes_resolve_package_and_relative_paths_and_unknown_ones_are_refused(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "part.dae").write_text("<COLLADA/>")
    link = '<link name="a"><collision><geometry><mesh filename="{}"/></geometry></collision></link>'
    for name, mesh in (("missing", "package://nowhere/meshes/cube.obj"),
                       ("collada", "meshes/part.dae")):
        (tmp_path / f"{name}.urdf").write_text(f'<robot name="r">{link.format(mesh)}</robot>')
    out = fake(isaacgym_fake_python, f"""
        import contextlib, io
        gym, sim, asset = urdf_sim(QUADRUPED, collapse_fixed_joints=False)
        shapes = gym.get_asset_rigid_shape_count(asset)
        errors = {{}}
        for name in ("missing", "collada"):
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr):
                refused = gym.load_asset(sim, {str(tmp_path)!r}, name + ".urdf",
                                         gymapi.AssetOptions())
            errors[name] = [refused is None, stderr.getvalue()]
        print(json.dumps({{"shapes": shapes, "errors": errors}}))
    """)
    # base box, plate (package://), LF_mount (../meshes), RF_mount (fake_pkg/meshes: relative
    # to the folder two above the URDF's, as IsaacGymEnvs' kuka.urdf does), 4 x 3 links
    assert out["shapes"] == 16
    refused, message = out["errors"]["missing"]
    assert refused and "package://nowhere/meshes/cube.obj" in message and "not found" in message
    refused, message = out["errors"]["collada"]
    assert refused and "part.dae" in message and ".stl or .obj" in message


@pytest.mark.parametrize("capsule", [False, True])
def test_replace_cylinder_with_capsule_and_thickness_set_where_a_body_rests(
        isaacgym_fake_python: str, capsule: bool) -> None:
    out = fake(isaacgym_fake_python, f"""
        result = []
        for thickness in (0.0, 0.03):
            gym, sim, asset = urdf_sim("fake_pkg/urdf/fake_cylinder.urdf", thickness=thickness,
                                       replace_cylinder_with_capsule={capsule})
            one_actor(gym, sim, asset, 0.5)
            assert gym.prepare_sim(sim)
            root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
            step(gym, sim, 400)
            gym.refresh_actor_root_state_tensor(sim)
            result.append(root[0, 2].item())
        print(json.dumps(result))
    """)
    half_length, radius = 0.15, 0.06  # the capsule's caps add its radius at each end
    bare = half_length + (radius if capsule else 0.0)
    assert out[0] == pytest.approx(bare, abs=0.005)
    assert out[1] == pytest.approx(bare + 0.03, abs=0.005)  # thickness: the rest distance


def test_fix_base_link_and_disable_gravity_hold_a_urdf_robot(isaacgym_fake_python: str) -> None:
    out = fake(isaacgym_fake_python, """
        result = {}
        for option in ("fix_base_link", "disable_gravity", "none"):
            gym, sim, asset = urdf_sim(QUADRUPED, ground=False,
                                       **({option: True} if option != "none" else {}))
            one_actor(gym, sim, asset, 1.0)
            assert gym.prepare_sim(sim)
            root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
            step(gym, sim, 100)
            gym.refresh_actor_root_state_tensor(sim)
            result[option] = [root[0, 2].item(), gym.get_asset_dof_count(asset)]
        print(json.dumps(result))
    """)
    assert out["fix_base_link"] == [pytest.approx(1.0, abs=1e-6), 8]
    assert out["disable_gravity"][0] == pytest.approx(1.0, abs=1e-3)
    assert out["none"][0] < 0.9  # half a second of free fall: 1.2 m


def test_mjcf_actuators_are_read_with_their_defaults_from_files_mujoco_alone_refuses(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    # IsaacGymEnvs' nv_humanoid.xml: a floor with an undefined material, a sensor on a
    # world site, motors with gear and ctrlrange from <default> (Humanoid reads the gears);
    # and a joint's frictionloss, which the SDK's importer ignores
    (tmp_path / "robot.xml").write_text("""<mujoco>
      <default><motor ctrllimited="true" ctrlrange="-1 1"/>
        <joint frictionloss="0.4"/></default>
      <worldbody>
        <geom name="floor" type="plane" size="5 5 .1" material="grid"/>
        <site name="origin"/>
        <body name="torso"><geom type="sphere" size="0.1"/>
          <body name="arm"><joint name="shoulder" axis="0 1 0" frictionloss="0.3"/>
            <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/></body>
        </body>
      </worldbody>
      <actuator><motor name="shoulder_motor" joint="shoulder" gear="67.5"/></actuator>
      <sensor><framepos objtype="site" objname="origin"/></sensor>
    </mujoco>""")
    out = fake(isaacgym_fake_python, f"""
        gym, sim, _ = urdf_sim(QUADRUPED)
        asset = gym.load_asset(sim, {str(tmp_path)!r}, "robot.xml", gymapi.AssetOptions())
        props = gym.get_asset_actuator_properties(asset)
        print(json.dumps([gym.get_asset_rigid_body_names(asset), [
            [p.motor_effort, p.control_limited, p.lower_control_limit, p.upper_control_limit]
            for p in props], gym.get_asset_dof_properties(asset)["friction"].tolist()]))
    """)
    assert out[:2] == [["torso", "arm"], [[67.5, True, -1.0, 1.0]]]
    assert out[2] == [0.0]  # MJCF frictionloss does not reach the SDK (xbpeng/MimicKit#25)


def test_mjcf_includes_are_followed_as_mujoco_follows_them(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    # IsaacGymEnvs' shadow_hand.xml includes its defaults, assets and robot from files
    # beside it; paths are relative to the main file's folder, nested ones too
    (tmp_path / "parts").mkdir()
    (tmp_path / "main.xml").write_text(
        '<mujoco><include file="parts/defaults.xml"/><worldbody>'
        '<include file="parts/robot.xml"/></worldbody></mujoco>')
    (tmp_path / "parts" / "defaults.xml").write_text(
        '<mujoco><default><joint damping="0.5" armature="0.03"/></default></mujoco>')
    (tmp_path / "parts" / "robot.xml").write_text(
        '<mujoco><body name="palm"><geom type="box" size="0.05 0.05 0.01"/>'
        '<include file="parts/finger.xml"/></body></mujoco>')
    (tmp_path / "parts" / "finger.xml").write_text(
        '<mujoco><body name="finger"><joint name="knuckle" axis="0 1 0"/>'
        '<geom type="capsule" fromto="0 0 0 0 0 0.05" size="0.01"/></body></mujoco>')
    (tmp_path / "loop.xml").write_text('<mujoco><include file="loop.xml"/></mujoco>')
    out = fake(isaacgym_fake_python, f"""
        import contextlib, io
        gym, sim, _ = urdf_sim(QUADRUPED)
        asset = gym.load_asset(sim, {str(tmp_path)!r}, "main.xml", gymapi.AssetOptions())
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            loop = gym.load_asset(sim, {str(tmp_path)!r}, "loop.xml", gymapi.AssetOptions())
        print(json.dumps([gym.get_asset_rigid_body_names(asset), gym.get_asset_dof_names(asset),
                          gym.get_asset_dof_properties(asset)["armature"].tolist(),
                          loop is None, stderr.getvalue()]))
    """)
    bodies, dofs, armature, refused, message = out
    assert bodies == ["palm", "finger"] and dofs == ["knuckle"]
    assert armature == pytest.approx([0.03])  # the included <default> applies
    assert refused and "includes itself" in message



def test_joint_stiffness_and_damping_are_drive_gains_used_by_pos_and_vel_only(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    # IsaacGymEnvs' HumanoidAMP (pdControl) keeps amp_humanoid.xml's joint stiffness and
    # damping as its PD gains, switching only driveMode to DOF_MODE_POS; the docs: "POS and
    # VEL engage a PD controller", NONE lets joints "move freely", EFFORT takes efforts
    (tmp_path / "arm.xml").write_text(
        '<mujoco><worldbody><body name="base"><geom type="box" size="0.05 0.05 0.05"/>'
        '<body name="arm"><joint name="hinge" axis="0 1 0" stiffness="600" damping="60"/>'
        '<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03"/></body></body>'
        '</worldbody></mujoco>')
    out = fake(isaacgym_fake_python, f"""
        gym, sim, _ = urdf_sim(QUADRUPED, ground=False)
        options = gymapi.AssetOptions()
        options.fix_base_link = True
        arm = gym.load_asset(sim, {str(tmp_path)!r}, "arm.xml", options)
        urdf = gym.load_asset(sim, MODELS, QUADRUPED, gymapi.AssetOptions())
        imported = gym.get_asset_dof_properties(arm)
        runs = [("POS", True), ("VEL", True), ("NONE", True), ("NONE", False),
                ("EFFORT", True), ("EFFORT", False)]
        actors = []
        for k, (mode, gains) in enumerate(runs):
            env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 2)
            pose = gymapi.Transform()
            pose.p = gymapi.Vec3(0.0, 0.0, 1.0)
            actor = gym.create_actor(env, arm, pose, "arm", k, 0)
            props = gym.get_asset_dof_properties(arm)
            props["driveMode"] = getattr(gymapi, "DOF_MODE_" + mode)
            if not gains:
                props["stiffness"], props["damping"] = 0.0, 0.0
            assert gym.set_actor_dof_properties(env, actor, props)
        assert gym.prepare_sim(sim)
        dofs = gymtorch.wrap_tensor(gym.acquire_dof_state_tensor(sim))
        step(gym, sim, 100)
        gym.refresh_dof_state_tensor(sim)
        print(json.dumps([[float(imported["stiffness"][0]), float(imported["damping"][0])],
                          gym.get_asset_dof_properties(urdf)["damping"].tolist(),
                          dofs[:, 0].tolist()]))
    """)
    imported, urdf_damping, angles = out
    assert imported == [600.0, 60.0]
    assert urdf_damping == pytest.approx([0.1, 0.0] * 4)  # <dynamics damping> on the hips
    pos, vel, none_gains, none_free, effort_gains, effort_free = angles
    assert abs(pos) < 0.02  # held near its target 0 against gravity by the PD gains
    assert 0.0 < vel < 0.1  # damped towards velocity 0: sinks slowly
    assert none_gains > 0.5 and effort_gains > 0.5  # half a second of free swing
    assert none_gains == pytest.approx(none_free, abs=1e-6)
    assert effort_gains == pytest.approx(effort_free, abs=1e-6)
