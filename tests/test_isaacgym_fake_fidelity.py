"""The SDK fake's simulation fidelity (issue 37): what legged_gym and IsaacGymEnvs tasks
rely on, each behaviour from a public source (docs/isaacgym.md, "Assumptions of the SDK
fake"). Each test runs a snippet on the fake's Python 3.8 (``run_fake``) and asserts here.
"""

from __future__ import annotations

import textwrap

import pytest

from .test_isaacgym_fake import run_fake

# Two stacked boxes: which of them the upper one rests on tells who collides with whom.
STACK = """
CUBE = '''<mujoco><worldbody><body name="cube"><geom type="box" size="0.1 0.1 0.1" mass="1"/>
</body></worldbody></mujoco>'''
def stack(groups, filters, spacing=1.0):
    '''An env per (group, filter) pair: a cube on the ground and one dropped onto it; the
    upper cube's height after 1.5 s, per env.'''
    gym = gymapi.acquire_gym()
    params = gymapi.SimParams()
    params.up_axis, params.substeps, params.dt = gymapi.UP_AXIS_Z, 2, 0.01
    params.gravity = gymapi.Vec3(0.0, 0.0, -9.81)
    sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
    plane = gymapi.PlaneParams()
    plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
    gym.add_ground(sim, plane)
    asset = load(gym, sim, CUBE, gymapi.AssetOptions())
    half = gymapi.Vec3(spacing, spacing, 0.0)
    for (lower, upper), (low_filter, up_filter) in zip(groups, filters):
        env = gym.create_env(sim, -half, half, 4)
        for height, group, bits in ((0.1, lower, low_filter), (0.5, upper, up_filter)):
            pose = gymapi.Transform(gymapi.Vec3(0.0, 0.0, height))
            gym.create_actor(env, asset, pose, "cube", group, bits)
    assert gym.prepare_sim(sim)
    root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
    step(gym, sim, 150)
    gym.refresh_actor_root_state_tensor(sim)
    return gym, sim, [round(z, 3) for z in root[1::2, 2].tolist()]
"""


def with_stack(code: str) -> str:
    return STACK + textwrap.dedent(code)


def test_actors_of_one_env_collide_as_their_groups_and_filters_say(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_stack("""
    _, _, heights = stack(groups=[(0, 0), (0, 1), (-1, 5), (3, 3), (3, 3)],
                          filters=[(0, 0), (0, 0), (0, 0), (1, 1), (1, 2)])
    print(json.dumps({"heights": heights}))
    """))
    same, other_group, shared, common_bit, other_bits = out["heights"]
    assert same == pytest.approx(0.3, abs=0.01)  # one group: the upper cube rests on the lower
    assert other_group == pytest.approx(0.1, abs=0.01)  # another group: it falls through
    assert shared == pytest.approx(0.3, abs=0.01)  # group -1 collides with every group
    assert common_bit == pytest.approx(0.1, abs=0.01)  # filters with a common bit: no contact
    assert other_bits == pytest.approx(0.3, abs=0.01)  # disjoint filters: contact


def test_actors_of_different_envs_never_collide(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_stack("""
    # all env origins at one point (legged_gym's layout): the cubes of env 0 and env 1 overlap
    gym = gymapi.acquire_gym()
    params = gymapi.SimParams()
    params.up_axis, params.gravity = gymapi.UP_AXIS_Z, gymapi.Vec3(0.0, 0.0, -9.81)
    sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
    plane = gymapi.PlaneParams()
    plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
    gym.add_ground(sim, plane)
    asset = load(gym, sim, CUBE, gymapi.AssetOptions())
    zero = gymapi.Vec3(0.0, 0.0, 0.0)
    for height in (0.1, 0.5):
        env = gym.create_env(sim, zero, zero, 1)
        gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(0.0, 0.0, height)), "c", -1, 0)
    assert gym.prepare_sim(sim)
    root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
    step(gym, sim, 150)
    gym.refresh_actor_root_state_tensor(sim)
    print(json.dumps({"z": root[:, 2].tolist(), "x": root[:, 0].tolist()}))
    """))
    assert out["x"] == pytest.approx([0.0, 0.0], abs=1e-6)
    assert out["z"] == pytest.approx([0.1, 0.1], abs=0.01)  # both on the ground, inside each other


def test_actuation_forces_drive_dof_mode_none_and_effort_within_the_effort_limit(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
    results = {}
    for mode, effort in (("NONE", None), ("EFFORT", None), ("EFFORT", 0.5), ("POS", None)):
        drive = {"driveMode": int(getattr(gymapi, "DOF_MODE_" + mode))}
        if effort is not None:
            drive["effort"] = effort
        gym, sim, envs, _ = build(HINGE, num_envs=2, fixed=True, ground=False, drive=drive)
        assert gym.prepare_sim(sim)
        t = tensors(gym, sim)
        force = torch.tensor([0.5, 1.0], dtype=torch.float32)
        gym.set_dof_actuation_force_tensor(sim, gymtorch.unwrap_tensor(force))
        step(gym, sim, 10)
        refresh(gym, sim)
        results["%s %s" % (mode, effort)] = t["dof_state"][:, 1].tolist()
        gym.destroy_sim(sim)
    print(json.dumps(results))
    """)
    v1, v2 = out["NONE None"]  # IsaacGymEnvs' Ant: DOF_MODE_NONE, driven by actuation forces
    assert v1 > 0 and v2 == pytest.approx(2 * v1, rel=1e-3)
    assert out["EFFORT None"] == pytest.approx(out["NONE None"], rel=1e-6)
    clipped = out["EFFORT 0.5"]  # "effort: Maximum effort": 1.0 is clamped to 0.5
    assert clipped == pytest.approx([v1, v1], rel=1e-3)
    assert out["POS None"] == [0.0, 0.0]  # a position drive ignores actuation forces


def test_a_dof_never_exceeds_its_velocity_property(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
    drive = {"driveMode": int(gymapi.DOF_MODE_EFFORT), "velocity": 2.0}
    gym, sim, envs, _ = build(HINGE, num_envs=1, fixed=True, ground=False, drive=drive)
    assert gym.prepare_sim(sim)
    t = tensors(gym, sim)
    force = torch.tensor([5.0], dtype=torch.float32)
    speeds = []
    for _ in range(50):
        gym.set_dof_actuation_force_tensor(sim, gymtorch.unwrap_tensor(force))
        step(gym, sim)
        refresh(gym, sim)
        speeds.append(t["dof_state"][0, 1].item())
    print(json.dumps({"speeds": speeds}))
    """)
    assert max(out["speeds"]) == pytest.approx(2.0, rel=1e-4)  # "velocity: Maximum velocity"
    assert out["speeds"][-1] == pytest.approx(2.0, rel=1e-4)


def test_a_body_is_held_to_its_assets_maximum_speeds(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
    gym, sim = z_up_sim(0.01, substeps=2)
    for name, angular in (("default", None), ("raised", 1000.0)):
        options = gymapi.AssetOptions()
        if angular is not None:
            options.max_angular_velocity = angular
        box = gym.create_box(sim, 0.2, 0.1, 0.05, options)
        env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 1)
        pose = gymapi.Transform()
        pose.p = gymapi.Vec3(0.0, 0.0, 1.0)
        gym.create_actor(env, box, pose, name, 0, 0)
    assert gym.prepare_sim(sim)
    root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
    gym.refresh_actor_root_state_tensor(sim)
    root[:, 7], root[:, 12] = 2000.0, 100.0  # along x, and about z (a principal axis)
    gym.set_actor_root_state_tensor(sim, gymtorch.unwrap_tensor(root))
    gym.simulate(sim)
    gym.fetch_results(sim, True)
    gym.refresh_actor_root_state_tensor(sim)
    print(json.dumps({"linear": root[:, 7:10].norm(dim=1).tolist(),
                      "angular": root[:, 10:13].norm(dim=1).tolist()}))
    """)
    # AssetOptions' max_linear_velocity (1000 m/s) and max_angular_velocity (64 rad/s unless
    # set), as PhysX holds an articulation link to them: within the step
    assert out["linear"] == pytest.approx([1000.0, 1000.0], rel=1e-5)
    assert out["angular"] == pytest.approx([64.0, 100.0], rel=1e-5)


def test_unwrap_tensor_refuses_what_the_sdk_refuses_and_the_dof_record_is_aligned(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
    results = {}
    for name, value in (("strided", torch.zeros(4, 3)[:, 0]), ("float64", torch.zeros(3).double()),
                        ("bool", torch.zeros(3, dtype=torch.bool)), ("int32", torch.zeros(3).int()),
                        ("float32", torch.zeros(2, 3))):
        try:
            tensor = gymtorch.unwrap_tensor(value)
            results[name] = [int(tensor.dtype), list(tensor.shape)]
        except Exception as exc:
            results[name] = "refused: %s" % exc
    gym, sim, envs, _ = build(HINGE, num_envs=1, fixed=True, ground=False)
    props = gym.get_actor_dof_properties(envs[0], 0)
    results["itemsize"] = props.dtype.itemsize
    results["offsets"] = [props.dtype.fields[name][1] for name in ("hasLimits", "lower")]
    print(json.dumps(results))
    """)
    assert "contiguous" in out["strided"]
    assert "dtype" in out["float64"] and "dtype" in out["bool"]
    assert out["float32"] == [0, [2, 3]]  # DTYPE_FLOAT32
    assert out["int32"] == [1, [3]]  # int32 travels as DTYPE_UINT32, as in the SDK's gymtorch
    assert out["itemsize"] == 40 and out["offsets"] == [0, 4]


def test_contact_collection_never_reports_no_contact_forces(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
    forces = {}
    for mode in ("CC_ALL_SUBSTEPS", "CC_NEVER"):
        gym = gymapi.acquire_gym()
        params = gymapi.SimParams()
        params.up_axis, params.gravity = gymapi.UP_AXIS_Z, gymapi.Vec3(0.0, 0.0, -9.81)
        params.physx.contact_collection = getattr(gymapi, mode)
        sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
        plane = gymapi.PlaneParams()
        plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
        gym.add_ground(sim, plane)
        asset = load(gym, sim, BOX, gymapi.AssetOptions())
        env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 1)
        gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(0, 0, 0.1)), "box", 0, 1)
        assert gym.prepare_sim(sim)
        contact = gymtorch.wrap_tensor(gym.acquire_net_contact_force_tensor(sim))
        step(gym, sim, 50)
        gym.refresh_net_contact_force_tensor(sim)
        forces[mode] = contact[0, 2].item()
        gym.destroy_sim(sim)
    print(json.dumps(forces))
    """)
    assert out["CC_ALL_SUBSTEPS"] > 10  # the box's weight
    assert out["CC_NEVER"] == 0.0  # "Don't collect any contacts"


def test_aggregates_hold_what_they_declare_and_their_self_collision_flag(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_stack("""
    results = {}
    def outcome(name, call):
        try:
            results[name] = repr(call())
        except RuntimeError as exc:
            results[name] = "raised: %s" % exc
    def new_env():
        gym = gymapi.acquire_gym()
        params = gymapi.SimParams()
        params.up_axis, params.gravity = gymapi.UP_AXIS_Z, gymapi.Vec3(0.0, 0.0, -9.81)
        sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
        plane = gymapi.PlaneParams()
        plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
        gym.add_ground(sim, plane)
        asset = load(gym, sim, CUBE, gymapi.AssetOptions())
        return gym, sim, asset, gym.create_env(sim, gymapi.Vec3(-1, -1, 0),
                                               gymapi.Vec3(1, 1, 1), 1)
    heights = {}
    for selfish in (True, False):
        gym, sim, asset, env = new_env()
        assert gym.begin_aggregate(env, 2, 2, selfish)
        for height in (0.1, 0.5):
            gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(0, 0, height)), "c", 0, 0)
        assert gym.end_aggregate(env)
        assert gym.prepare_sim(sim)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        step(gym, sim, 150)
        gym.refresh_actor_root_state_tensor(sim)
        heights[str(selfish)] = root[1, 2].item()
        gym.destroy_sim(sim)
    results["heights"] = heights
    # misuses: reported as the docstrings say ("false otherwise"), or logged (PhysX)
    gym, sim, asset, env = new_env()
    outcome("end_without_begin", lambda: gym.end_aggregate(env))
    assert gym.begin_aggregate(env, 2, 2, True)
    outcome("nested", lambda: gym.begin_aggregate(env, 2, 2, True))
    for height in (0.1, 0.5):
        gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(0, 0, height)), "c", 0, 0)
    outcome("third_actor", lambda: gym.create_actor(env, asset, gymapi.Transform(), "c", 0, 0))
    outcome("prepare_while_open", lambda: gym.prepare_sim(sim))
    outcome("end_after_prepare_closed_it", lambda: gym.end_aggregate(env))
    print(json.dumps(results))
    """))
    assert out["end_without_begin"] == out["nested"] == "False", out
    assert out["third_actor"] == "2", out  # PhysX logs the full aggregate and goes on
    assert out["prepare_while_open"] == "True", out  # closed, with a warning
    assert out["end_after_prepare_closed_it"] == "False", out
    assert out["heights"]["True"] == pytest.approx(0.3, abs=0.01)  # self-collision: stacked
    assert out["heights"]["False"] == pytest.approx(0.1, abs=0.01)  # none: through each other


def test_force_sensors_dof_forces_and_actuator_properties(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_stack("""
    MOTOR = HINGE.replace("</mujoco>", '<actuator><motor joint="hinge" gear="15" '
                          'ctrlrange="-1 1" ctrllimited="true"/></actuator></mujoco>')
    results = {}
    for ground in (True, False):  # a cube resting on the ground, a cube falling
        gym = gymapi.acquire_gym()
        params = gymapi.SimParams()
        params.up_axis, params.gravity = gymapi.UP_AXIS_Z, gymapi.Vec3(0.0, 0.0, -9.81)
        sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
        if ground:
            plane = gymapi.PlaneParams()
            plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
            gym.add_ground(sim, plane)
        asset = load(gym, sim, CUBE, gymapi.AssetOptions())
        props = gymapi.ForceSensorProperties()
        props.use_world_frame = True
        assert gym.create_asset_force_sensor(asset, 0, gymapi.Transform(), props) == 0
        for _ in range(2):
            env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 2)
            gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(0, 0, 0.1)), "c", 0, 0)
        assert gym.prepare_sim(sim)
        sensors = gymtorch.wrap_tensor(gym.acquire_force_sensor_tensor(sim))
        step(gym, sim, 50)
        gym.refresh_force_sensor_tensor(sim)
        results["ground" if ground else "falling"] = sensors.tolist()
        results["counts"] = [gym.get_sim_force_sensor_count(sim),
                             gym.get_actor_force_sensor_count(env, 0)]
        gym.destroy_sim(sim)
    drive = {"driveMode": int(gymapi.DOF_MODE_POS), "stiffness": 20.0, "damping": 1.0}
    gym, sim, envs, _ = build(HINGE, num_envs=2, fixed=True, ground=False, drive=drive)
    assert gym.enable_actor_dof_force_sensors(envs[0], 0)
    assert gym.prepare_sim(sim)
    forces = gymtorch.wrap_tensor(gym.acquire_dof_force_tensor(sim))
    targets = torch.tensor([0.5, 0.5])
    gym.set_dof_position_target_tensor(sim, gymtorch.unwrap_tensor(targets))
    step(gym, sim, 2)
    gym.refresh_dof_force_tensor(sim)
    results["dof_forces"] = forces.tolist()
    actuated = load(gym, sim, MOTOR, gymapi.AssetOptions())
    results["actuators"] = [[p.motor_effort, p.control_limited, p.lower_control_limit,
                             p.upper_control_limit]
                            for p in gym.get_asset_actuator_properties(actuated)]
    print(json.dumps(results))
    """))
    assert out["counts"] == [2, 1]
    for reading in out["ground"]:  # "A body resting on the ground plane": net force zero
        assert reading[0:3] == pytest.approx([0.0, 0.0, 0.0], abs=0.05)
    for reading in out["falling"]:  # falling freely: its weight, world frame
        assert reading[0:3] == pytest.approx([0.0, 0.0, -9.81], abs=1e-3)
        assert reading[3:6] == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)
    enabled, disabled = out["dof_forces"]
    assert enabled > 1.0 and disabled == 0.0  # zero unless enable_actor_dof_force_sensors
    assert out["actuators"] == [[15.0, True, -1.0, 1.0]]  # Ant's motor_effort: the gear


def test_max_depenetration_velocity_bounds_how_fast_a_buried_actor_comes_out(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_stack("""
    rise = {}
    for cap in (100.0, 1.0):  # PhysXParams' default; legged_gym's value
        gym = gymapi.acquire_gym()
        params = gymapi.SimParams()
        params.up_axis, params.gravity = gymapi.UP_AXIS_Z, gymapi.Vec3(0.0, 0.0, -9.81)
        params.dt, params.substeps = 0.005, 1
        params.physx.max_depenetration_velocity = cap
        sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
        plane = gymapi.PlaneParams()
        plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
        gym.add_ground(sim, plane)
        asset = load(gym, sim, CUBE, gymapi.AssetOptions())
        env = gym.create_env(sim, gymapi.Vec3(0, 0, 0), gymapi.Vec3(0, 0, 0), 1)
        # 15 cm inside the ground, as legged_gym's robots start before their first reset
        gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(0, 0, -0.05)), "c", 0, 0)
        assert gym.prepare_sim(sim)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        speeds = []
        for _ in range(200):
            gym.simulate(sim)
            gym.refresh_actor_root_state_tensor(sim)
            speeds.append(root[0, 9].item())
        rise[str(cap)] = [max(speeds), root[0, 2].item()]
        gym.destroy_sim(sim)
    print(json.dumps(rise))
    """))
    fast, slow = out["100.0"], out["1.0"]
    assert fast[0] > 2.0  # MuJoCo's own recovery, well under PhysX's default cap of 100 m/s
    assert slow[0] <= 1.0  # "max_depenetration_velocity": 1 m/s
    assert slow[1] == pytest.approx(0.1, abs=0.01)  # out, and resting on the ground
