"""What one ``simulate`` of the SDK fake reports and how its DOFs and bodies move (issue 44):
contact forces of the step's own solve, inertia recomputed on a mass change, DOF velocity
limits and DOF friction as PhysX has them. Sources: docs/isaacgym.md, "Assumptions of the
SDK fake". Each test runs a snippet on the fake's Python 3.8 (``run_fake``).
"""

from __future__ import annotations

import textwrap

import pytest

from .test_isaacgym_fake import run_fake

# One cube (0.2 m, 1 kg, inertia from its shape) and a sim of one cube per env.
CUBES = """
CUBE = '''<mujoco><worldbody><body name="cube"><geom type="box" size="0.1 0.1 0.1" mass="1"/>
</body></worldbody></mujoco>'''
MASS, G, DT = 1.0, 9.81, 0.01
def cubes(heights, substeps=1, collection=gymapi.CC_ALL_SUBSTEPS):
    '''A sim with a cube per env, its bottom ``h`` above the ground for ``h`` in
    ``heights``; returns gym, sim, root and net contact force tensors.'''
    gym = gymapi.acquire_gym()
    params = gymapi.SimParams()
    params.up_axis, params.gravity = gymapi.UP_AXIS_Z, gymapi.Vec3(0.0, 0.0, -G)
    params.dt, params.substeps = DT, substeps
    params.physx.contact_collection = collection
    sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
    plane = gymapi.PlaneParams()
    plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
    gym.add_ground(sim, plane)
    asset = load(gym, sim, CUBE, gymapi.AssetOptions())
    for k, height in enumerate(heights):
        env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 4)
        gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(0, 0, 0.1 + height)), "c", k, 0)
    assert gym.prepare_sim(sim)
    root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
    force = gymtorch.wrap_tensor(gym.acquire_net_contact_force_tensor(sim))
    return gym, sim, root, force
def record(gym, sim, root, force, steps):
    '''Per step: each env's cube height, vertical velocity and net contact force.'''
    rows = []
    for _ in range(steps):
        gym.simulate(sim)
        gym.refresh_actor_root_state_tensor(sim)
        gym.refresh_net_contact_force_tensor(sim)
        rows.append([root[:, 2].tolist(), root[:, 9].tolist(), force.tolist()])
    return rows
"""


def with_cubes(code: str) -> str:
    return CUBES + textwrap.dedent(code)


MASS, G, DT = 1.0, 9.81, 0.01


def impulse_balance(v0: float, v1: float, force: float) -> float:
    """How far the reported vertical contact force is from the one that changed the cube's
    velocity in the step: with one substep MuJoCo solves at the step's start and
    integrates v1 = v0 + dt (f / m - g) (semi-implicit Euler), so the solve's own force
    is m ((v1 - v0) / dt + g) exactly, up to float32 rounding of the velocities."""
    return force - MASS * ((v1 - v0) / DT + G)


def test_a_dropped_cube_reports_no_force_in_free_fall_and_its_impact_in_the_step_it_lands(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_cubes("""
    gym, sim, root, force = cubes([0.3])
    print(json.dumps(record(gym, sim, root, force, 60)))
    """))
    heights = [z[0] for z, _, _ in out]
    speeds = [vz[0] for _, vz, _ in out]
    forces = [f[0] for _, _, f in out]
    landing = next(k for k, f in enumerate(forces) if f[2] != 0.0)
    # free fall until the cube's bottom reaches the ground: 0.3 m in 0.247 s
    assert landing == pytest.approx((2 * 0.3 / G) ** 0.5 / DT, abs=1.5)
    assert all(f == [0.0, 0.0, 0.0] for f in forces[:landing])
    # the step before ended in the ground but started in the air: its solve had no contact
    assert heights[landing - 2] > 0.1 >= heights[landing - 1]
    # The impact: the landing step's solve stops the fall (MuJoCo's soft contact even
    # throws the cube back up), so its impulse is at least the momentum of the fall, m g t
    fall = MASS * G * landing * DT
    assert (forces[landing][2] - MASS * G) * DT >= fall
    # and in every step the reported force is the one that changed the cube's momentum
    for k in range(1, len(out)):
        assert impulse_balance(speeds[k - 1], speeds[k], forces[k][2]) == pytest.approx(
            0.0, abs=2e-3 * MASS * G), k


def test_a_resting_cube_carries_its_weight_with_any_substeps_and_collection(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_cubes("""
    result = {}
    for substeps, mode in ((1, "CC_ALL_SUBSTEPS"), (2, "CC_ALL_SUBSTEPS"),
                           (2, "CC_LAST_SUBSTEP")):
        gym, sim, root, force = cubes([0.0, 0.0], substeps, getattr(gymapi, mode))
        result["%d %s" % (substeps, mode)] = record(gym, sim, root, force, 150)
        gym.destroy_sim(sim)
    print(json.dumps(result))
    """))
    for case, rows in out.items():
        # at rest the velocity no longer changes: the force is the weight, up to float32
        # rounding (1e-7 relative) and what is left of the settling after 1.5 s (75 times
        # the contacts' 0.02 s time constant)
        _, _, forces = rows[-1]
        for force in forces:
            assert force == pytest.approx([0.0, 0.0, MASS * G], rel=1e-4, abs=1e-4), case
    speeds = [vz[0] for _, vz, _ in out["1 CC_ALL_SUBSTEPS"]]
    forces = [f[0][2] for _, _, f in out["1 CC_ALL_SUBSTEPS"]]
    for k in range(1, len(speeds)):  # and it carried it from the first step on
        assert impulse_balance(speeds[k - 1], speeds[k], forces[k]) == pytest.approx(
            0.0, abs=2e-3 * MASS * G), k


def test_all_substeps_report_the_mean_force_of_the_step_and_last_substep_the_last(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_cubes("""
    result = {}
    for collection in ("CC_ALL_SUBSTEPS", "CC_LAST_SUBSTEP"):
        gym, sim, root, force = cubes([0.294], 2, getattr(gymapi, collection))
        result[collection] = record(gym, sim, root, force, 40)
        gym.destroy_sim(sim)
    print(json.dumps(result))
    """))
    # The docs' tensors.html: CC_ALL_SUBSTEPS aggregates the forces of all substeps,
    # CC_LAST_SUBSTEP collects the last substep's. The collection does not change the
    # motion; the mean force over the step is the one that changed the cube's momentum in
    # it, so it balances over the whole step as with one substep.
    every, last = out["CC_ALL_SUBSTEPS"], out["CC_LAST_SUBSTEP"]
    assert [s for _, s, _ in every] == [s for _, s, _ in last]
    speeds = [vz[0] for _, vz, _ in every]
    mean = [f[0][2] for _, _, f in every]
    final = [f[0][2] for _, _, f in last]
    for k in range(1, len(speeds)):
        assert impulse_balance(speeds[k - 1], speeds[k], mean[k]) == pytest.approx(
            0.0, abs=2e-3 * MASS * G), k
    # 0.294 m of free fall in 5 ms substeps: the cube reaches the ground in the second
    # substep of step 24 (its first substep starts 6 mm above, its second 6 mm below): the
    # last substep carries the whole impulse, twice the step's mean
    landing = next(k for k, f in enumerate(mean) if f != 0.0)
    assert landing == 24 and next(k for k, f in enumerate(final) if f != 0.0) == 24
    assert final[landing] == pytest.approx(2 * mean[landing], rel=1e-5)
    assert final[landing] > 5 * MASS * G


def test_an_env_reset_in_the_step_reports_the_forces_of_the_reset_state(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_cubes("""
    gym, sim, root, force = cubes([0.0, 2.0])
    record(gym, sim, root, force, 50)  # cube 0 rests, cube 1 falls
    gym.refresh_actor_root_state_tensor(sim)
    before = root[:, 9].tolist()
    state = root.clone()
    state[0, 2], state[0, 7:13] = 1.1, 0.0  # cube 0 to 1 m up, at rest
    state[1, 2], state[1, 7:13] = 0.099, 0.0  # cube 1 onto the ground,
    state[1, 9] = -2.0                      # landing at 2 m/s
    gym.set_actor_root_state_tensor(sim, gymtorch.unwrap_tensor(state))
    gym.refresh_net_contact_force_tensor(sim)
    unsimulated = force.tolist()
    rows = record(gym, sim, root, force, 1)
    print(json.dumps({"unsimulated": unsimulated, "after": rows[0]}))
    """))
    # before simulate, the forces are those of the last simulate (the SDK reports what its
    # last simulate computed): cube 0 rested, cube 1 was in the air
    assert out["unsimulated"][0][2] == pytest.approx(MASS * G, rel=1e-3)
    assert out["unsimulated"][1] == [0.0, 0.0, 0.0]
    _, speeds, forces = out["after"]
    assert forces[0] == [0.0, 0.0, 0.0]  # reset into the air: no contact in its solve
    # reset onto the ground at -2 m/s: the solve of the reset state stops it
    assert forces[1][2] > 5 * MASS * G
    assert impulse_balance(-2.0, speeds[1], forces[1][2]) == pytest.approx(
        0.0, abs=2e-3 * MASS * G)


# A box (0.4 x 0.2 x 0.1 m, 1 kg) spinning about its vertical axis through its centre.
WHEEL = """
WHEEL = '''<mujoco><worldbody><body name="base"><geom type="sphere" size="0.02" mass="1"/>
<body name="wheel"><joint name="spin" type="hinge" axis="0 0 1"/>
<geom type="box" size="0.2 0.1 0.05" mass="1"/></body></body></worldbody></mujoco>'''
"""


def test_recompute_inertia_scales_the_inertia_with_the_new_mass(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, WHEEL + textwrap.dedent("""
    effort = {"driveMode": int(gymapi.DOF_MODE_EFFORT)}
    gym, sim, envs, _ = build(WHEEL, num_envs=3, fixed=True, ground=False, drive=effort)
    inertia = []
    for env, recompute in zip(envs, (None, True, False)):
        props = gym.get_actor_rigid_body_properties(env, 0)
        if recompute is not None:
            props[1].mass = 3.0
            assert gym.set_actor_rigid_body_properties(env, 0, props, recompute)
        props = gym.get_actor_rigid_body_properties(env, 0)
        inertia.append([[props[1].mass, props[1].inertia.x.x, props[1].inertia.y.y,
                         props[1].inertia.z.z], [props[0].mass, props[0].inertia.z.z]])
    assert gym.prepare_sim(sim)
    t = tensors(gym, sim)
    torque = torch.ones(3)
    gym.set_dof_actuation_force_tensor(sim, gymtorch.unwrap_tensor(torque))
    step(gym, sim, 10)
    refresh(gym, sim)
    print(json.dumps({"inertia": inertia, "speed": t["dof_state"][:, 1].tolist()}))
    """))

    def box(mass: float) -> list[float]:  # a box of half extents 0.2, 0.1, 0.05
        a, b, c = 0.2, 0.1, 0.05
        return [mass, mass / 3 * (b * b + c * c), mass / 3 * (a * a + c * c),
                mass / 3 * (a * a + b * b)]

    unchanged, recomputed, kept = out["inertia"]
    assert unchanged[0] == pytest.approx(box(1.0), rel=1e-6)
    assert recomputed[0] == pytest.approx(box(3.0), rel=1e-6)  # a box of the new mass
    assert kept[0] == pytest.approx([3.0, *box(1.0)[1:]], rel=1e-6)  # without the flag
    for _, base in out["inertia"]:  # the other body keeps its own
        assert base == pytest.approx([1.0, 0.4 * 0.02 ** 2], rel=1e-6)
    # and the dynamics follow: 1 N m for 0.1 s spins it to 0.1 / I_zz
    assert out["speed"] == pytest.approx([0.1 / box(1.0)[3], 0.1 / box(3.0)[3],
                                          0.1 / box(1.0)[3]], rel=1e-4)


def test_a_dof_starts_each_substep_within_its_velocity_property(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
    drive = {"driveMode": int(gymapi.DOF_MODE_EFFORT), "velocity": 2.0}
    gym, sim, envs, _ = build(HINGE, num_envs=1, fixed=True, ground=False, drive=drive)
    assert gym.prepare_sim(sim)
    t = tensors(gym, sim)
    state = torch.tensor([[0.0, 10.0]])  # five times its maximum velocity
    gym.set_dof_state_tensor(sim, gymtorch.unwrap_tensor(state))
    step(gym, sim)
    refresh(gym, sim)
    print(json.dumps(t["dof_state"][0].tolist()))
    """)
    # PhysX clamps the joint velocity the step starts from: the arm moves 2 rad/s * 0.01 s
    assert out == pytest.approx([0.02, 2.0], rel=1e-5)


def test_dof_friction_is_a_coefficient_of_the_load_the_joint_carries(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
    drive = {"driveMode": int(gymapi.DOF_MODE_EFFORT), "friction": 0.2}
    gym, sim, envs, _ = build(HINGE, num_envs=2, fixed=True, ground=False, drive=drive)
    assert gym.prepare_sim(sim)
    t = tensors(gym, sim)
    bound = 0.2 * 1.0 * 9.81  # the arm's weight is the joint's load
    torque = torch.tensor([0.8 * bound, 1.2 * bound])
    gym.set_dof_actuation_force_tensor(sim, gymtorch.unwrap_tensor(torque))
    step(gym, sim, 50)
    refresh(gym, sim)
    print(json.dumps(t["dof_state"][:, 1].tolist()))
    """)
    # The arm (1 kg) hangs on a vertical hinge: the joint carries its weight (9.81 N at its
    # centre of mass, no torque about it), so friction holds up to 0.2 * 9.81 N m. Below,
    # it stays (MuJoCo's friction is soft: it creeps, here at 0.02 rad/s); above, it turns.
    held, turning = out
    assert abs(held) < 0.05
    assert turning > 1.0
