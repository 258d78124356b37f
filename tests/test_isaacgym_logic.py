"""Unit tests of the IsaacGym engine's pure logic (no SDK): MJCF scan, mapping, checks."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from unisim import models
from unisim_worker.engines import mjcf_scan
from unisim_worker.engines.isaacgym import mapping
from unisim_worker.engines.isaacgym.options import Options

# gymapi.DofProperties as IsaacGym Preview 4 returns it (a numpy structured array).
DOF_PROPERTIES = np.dtype([("hasLimits", "?"), ("lower", "<f4"), ("upper", "<f4"),
                           ("driveMode", "<i4"), ("velocity", "<f4"), ("effort", "<f4"),
                           ("stiffness", "<f4"), ("damping", "<f4"), ("friction", "<f4"),
                           ("armature", "<f4")])
MODES = (0, 1, 2, 3)  # DOF_MODE_NONE, POS, VEL, EFFORT


def mjcf(body: str, extra: str = "", actuators: str = "") -> str:
    return (f"<mujoco>{extra}<worldbody>{body}</worldbody>"
            f"<actuator>{actuators}</actuator></mujoco>")


ARM = mjcf(
    '<body name="base"><geom type="box" size=".1 .1 .1"/>'
    '<body name="upper"><joint name="shoulder" range="-90 90" damping="2"/>'
    '<geom type="capsule" fromto="0 0 0 0 0 .5" size=".03"/>'
    '<body name="lower"><joint name="elbow" type="slide" range="-.1 .2" armature=".5" '
    'frictionloss=".3"/><geom type="sphere" size=".05"/></body></body></body>',
    actuators='<position name="p_elbow" joint="elbow" kp="40" kv="3" ctrlrange="-.1 .2" '
              'forcerange="-7 5"/><motor name="m_shoulder" joint="shoulder" gear="4" '
              'ctrlrange="-1 1"/>')


# -- MJCF scan ------------------------------------------------------------------------

def test_scan_reads_the_bundled_quadruped_with_defaults_units_and_keyframe() -> None:
    scene = mjcf_scan.scan(str(models.path("quadruped")))
    assert scene.free_root and scene.root_body == "torso"
    assert [j.name for j in scene.joints][:3] == ["root", "fl_hip", "fl_knee"]
    assert scene.nq == 15 and scene.nv == 14
    knee = scene.dof_joints[1]
    assert knee.limited and knee.lower == pytest.approx(math.radians(30))
    assert knee.upper == pytest.approx(math.radians(100))
    assert (knee.damping, knee.armature) == (1.0, 0.01)
    actuator = scene.actuators[0]
    assert (actuator.kind, actuator.kp, actuator.force_range) == ("position", 30.0, (-15.0, 15.0))
    assert scene.timestep == 0.005 and scene.gravity == [0.0, 0.0, -9.81]
    qpos, qvel = scene.initial_state("stand")
    assert qpos[:7].tolist() == [0, 0, 0.5, 1, 0, 0, 0] and qpos[8] == 0.9
    assert qvel.shape == (14,) and not qvel.any()
    assert any("floor" in warning for warning in scene.warnings)


def test_scan_default_pose_is_the_root_body_pose_and_joint_refs() -> None:
    scene = mjcf_scan.scan(mjcf('<body name="b" pos="1 2 3" quat="0 0 0 2"><freejoint name="f"/>'
                                '<geom size=".1"/><body name="c"><joint name="j" ref="0.5" '
                                'type="slide"/><geom size=".1"/></body></body>'))
    assert scene.qpos0().tolist() == [1, 2, 3, 0, 0, 0, 1, 0.5]


def test_scan_follows_default_classes_and_childclass() -> None:
    scene = mjcf_scan.scan(
        '<mujoco><compiler angle="radian"/><default><joint damping="1"/>'
        '<default class="stiff"><joint damping="9" range="-1 1"/></default></default>'
        '<worldbody><body name="a" childclass="stiff"><geom size=".1"/>'
        '<joint name="j1"/><body name="b"><joint name="j2" class="main"/><geom size=".1"/>'
        '</body></body></worldbody></mujoco>')
    j1, j2 = scene.dof_joints
    assert (j1.damping, j1.limited, j1.upper) == (9.0, True, 1.0)  # radians kept
    assert (j2.damping, j2.limited) == (1.0, False)
    assert not scene.free_root


def test_scan_reads_actuator_kinds_gears_and_ranges() -> None:
    scene = mjcf_scan.scan(ARM)
    position, motor = scene.actuators
    assert (position.kind, position.kp, position.kv) == ("position", 40.0, 3.0)
    assert position.ctrl_range == (-0.1, 0.2) and position.force_range == (-7.0, 5.0)
    assert (motor.kind, motor.gear, motor.force_range) == ("motor", 4.0, None)


@pytest.mark.parametrize(("xml", "message"), [
    (mjcf('<body name="a"><geom size="1"/></body><body name="b"><geom size="1"/></body>'),
     "exactly one root body"),
    (mjcf('<body name="a"><geom type="mesh" mesh="m"/></body>'), "primitive shapes only"),
    ('<mujoco><include file="x.xml"/><worldbody/></mujoco>', "<include>"),
    (mjcf('<body name="a"><joint name="j" type="ball"/><geom size="1"/></body>'),
     "ball joint"),
    (mjcf('<body name="a"><joint type="hinge"/><geom size="1"/></body>'), "needs a name"),
    (mjcf('<body name="a"><joint name="j"/><geom size="1"/></body>',
          actuators='<general name="g" joint="j"/>'), "use position or motor"),
    (mjcf('<body name="a"><joint name="j"/><geom size="1"/></body>',
          actuators='<position name="p" joint="j" gear="2"/>'), "gear=1"),
    (mjcf('<body name="a" euler="0 0 1"><freejoint name="f"/><geom size="1"/></body>'),
     "quat="),
    ("<robot/>", "root element is <robot>"),
])
def test_scan_refuses_what_isaacgym_cannot_import_and_says_what_to_change(
        xml: str, message: str) -> None:
    with pytest.raises(mjcf_scan.MjcfError, match=message.replace("(", r"\(")):
        mjcf_scan.scan(xml)


def test_scan_refuses_unknown_keyframes_and_wrong_sized_ones() -> None:
    with pytest.raises(mjcf_scan.MjcfError, match=r"no keyframe 'run'; its keyframes: \['stand'\]"):
        mjcf_scan.scan(str(models.path("quadruped"))).initial_state("run")
    with pytest.raises(mjcf_scan.MjcfError, match="must have 8 numbers"):
        mjcf_scan.scan(mjcf('<body name="a"><freejoint name="f"/><geom size="1"/>'
                            '<body name="b"><joint name="j"/><geom size="1"/></body></body>',
                            extra='<keyframe><key name="k" qpos="0 0 1"/></keyframe>'))


# -- names, quaternions, frames -------------------------------------------------------------

def test_map_by_name_follows_the_engine_order_and_names_the_gaps() -> None:
    index = mapping.map_by_name(["a", "b", "c"], ["c", "a", "b"], "DOFs")
    assert index.tolist() == [2, 0, 1]
    with pytest.raises(ValueError, match=r"the engine has \['d'\] but the MJCF lacks them"):
        mapping.map_by_name(["a", "b"], ["a", "d"], "DOFs")


def test_quaternion_conversions_are_inverse_and_rotate_like_mujoco() -> None:
    wxyz = np.array([[math.cos(0.25), 0, 0, math.sin(0.25)]])  # 0.5 rad about z
    xyzw = mapping.wxyz_to_xyzw(wxyz)
    assert xyzw.tolist() == [[0, 0, math.sin(0.25), math.cos(0.25)]]
    assert np.array_equal(mapping.xyzw_to_wxyz(xyzw), wxyz)
    rotated = mapping.rotation_matrices(wxyz)[0] @ [1.0, 0.0, 0.0]
    np.testing.assert_allclose(rotated, [math.cos(0.5), math.sin(0.5), 0.0], atol=1e-12)


def random_state(rng: np.random.Generator, n: int, ndof: int) -> tuple[Any, Any]:
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    qpos = np.concatenate([rng.normal(size=(n, 3)), quat, rng.normal(size=(n, ndof))], axis=1)
    return qpos, rng.normal(size=(n, 6 + ndof))


def test_state_map_round_trips_through_engine_conventions() -> None:
    rng = np.random.default_rng(0)
    origins = rng.normal(size=(5, 3)) * 10
    com = rng.normal(size=(5, 3)) * 0.1
    state_map = mapping.StateMap(True, [2, 0, 1], origins, com)
    qpos, qvel = random_state(rng, 5, 3)
    rows = np.array([4, 1, 3])
    root, dof = state_map.to_engine(rows, qpos[rows], qvel[rows])
    assert root.dtype == np.float32 and dof.shape == (3, 3, 2)
    np.testing.assert_allclose(root[:, 0:3], qpos[rows, 0:3] + origins[rows], rtol=1e-6)
    assert dof[:, :, 0] == pytest.approx(qpos[rows][:, 7:][:, [2, 0, 1]].astype(np.float32))
    out_qpos, out_qvel = np.full_like(qpos, 7.0), np.full_like(qvel, 7.0)
    state_map.from_engine(rows, root, dof, out_qpos, out_qvel)
    np.testing.assert_allclose(out_qpos[rows], qpos[rows], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out_qvel[rows], qvel[rows], rtol=1e-4, atol=1e-5)
    assert (out_qpos[[0, 2]] == 7.0).all(), "rows not asked for stay untouched"


def test_state_map_velocities_follow_rigid_body_kinematics() -> None:
    """PhysX's COM velocity is the origin velocity plus omega x (R com)."""
    com = np.array([[0.0, 0.2, 0.0]])
    state_map = mapping.StateMap(True, [], np.zeros((1, 3)), com)
    qpos = np.array([[0, 0, 1, 1, 0, 0, 0]], dtype=float)  # identity orientation
    qvel = np.array([[0, 0, 0, 0, 0, 3.0]])  # spinning about z at 3 rad/s, origin at rest
    root, _ = state_map.to_engine([0], qpos, qvel)
    np.testing.assert_allclose(root[0, 7:10], [-0.6, 0, 0], atol=1e-6)  # (0,0,3) x (0,.2,0)
    np.testing.assert_allclose(root[0, 10:13], [0, 0, 3], atol=1e-6)


def test_state_map_of_a_fixed_base_has_no_root_columns() -> None:
    state_map = mapping.StateMap(False, [1, 0], np.zeros((2, 3)), np.zeros((2, 3)))
    root, dof = state_map.to_engine([1], [[0.1, 0.2]], [[0.3, 0.4]])
    assert not root.any()
    np.testing.assert_allclose(dof[0], [[0.2, 0.4], [0.1, 0.3]], rtol=1e-6)


# -- drives, readback, bounds, variants ---------------------------------------------------

def test_drives_map_actuators_by_name_onto_reordered_dofs() -> None:
    scene = mjcf_scan.scan(ARM)
    drives = mapping.Drives(scene, ["elbow", "shoulder"], MODES)
    props = drives.fill(np.zeros(2, dtype=DOF_PROPERTIES))
    assert props["driveMode"].tolist() == [1, 3]  # position on elbow, effort on shoulder
    assert props["stiffness"].tolist() == [40, 0]
    assert props["damping"].tolist() == [3, 0]  # kv; the motor joint's damping is lost...
    assert any("passive damping 2" in warning for warning in drives.warnings)  # ...and said
    assert props["effort"][0] == 7 and props["effort"][1] == np.float32(mapping.F32_MAX)
    assert props["armature"].tolist() == [0.5, 0] and props["friction"][0] == np.float32(0.3)
    assert props["hasLimits"].tolist() == [True, True]
    assert props["lower"][1] == np.float32(-math.pi / 2)
    ctrl_map = mapping.CtrlMap([drives], [0, 0])
    position, effort = ctrl_map.targets(np.array([[0.5, 2.0], [-0.05, -0.5]]))
    assert position.tolist() == [[0.2], [-0.05]]  # clamped to ctrlrange
    assert effort.tolist() == [[4.0], [-2.0]]  # clamped, times gear
    assert ctrl_map.position_dofs.tolist() == [0] and ctrl_map.effort_dofs.tolist() == [1]


def test_unactuated_damped_joints_get_a_zero_velocity_drive() -> None:
    scene = mjcf_scan.scan(mjcf('<body name="a"><joint name="j" damping="0.7"/>'
                                '<geom size=".1"/><body name="b"><joint name="k"/>'
                                '<geom size=".1"/></body></body>'))
    drives = mapping.Drives(scene, ["j", "k"], MODES)
    assert drives.mode.tolist() == [2, 0] and drives.damping.tolist() == [0.7, 0]


def test_two_actuators_on_one_joint_are_refused() -> None:
    scene = mjcf_scan.scan(mjcf('<body name="a"><joint name="j"/><geom size=".1"/></body>',
                                actuators='<position name="p" joint="j"/>'
                                          '<motor name="m" joint="j"/>'))
    with pytest.raises(ValueError, match="'p' and 'm' drive the same joint 'j'"):
        mapping.Drives(scene, ["j"], MODES)


def test_readback_verification_names_the_field_that_changed() -> None:
    scene = mjcf_scan.scan(ARM)
    written = mapping.Drives(scene, ["elbow", "shoulder"], MODES).fill(
        np.zeros(2, dtype=DOF_PROPERTIES))
    mapping.verify_readback(written, written.copy(), env=0)
    changed = written.copy()
    changed["damping"][0] = 0.0
    with pytest.raises(RuntimeError, match=r"env 3: damping: wrote \[3.0, 0.0\], read back"):
        mapping.verify_readback(written, changed, env=3)


def test_bounds_check_refuses_inverted_and_nan_ranges() -> None:
    scene = mjcf_scan.scan(ARM)
    scene.dof_joints[0].lower = 2.0
    with pytest.raises(ValueError, match="'shoulder' has an inverted range"):
        mapping.check_bounds(scene)
    scene.dof_joints[0].lower = float("nan")
    with pytest.raises(ValueError, match="outside float32"):
        mapping.check_bounds(scene)


def test_variants_must_share_the_layout() -> None:
    scene = mjcf_scan.scan(ARM)
    same = mapping.layout_signature(scene, ["elbow", "shoulder"], ["base", "upper", "lower"])
    other = mapping.layout_signature(scene, ["shoulder", "elbow"], ["base", "upper", "lower"])
    mapping.check_variant_layouts([same, same], ["a.xml", "b.xml"])
    with pytest.raises(ValueError, match=r"variant b\.xml changes the layout \(engine_dofs\)"):
        mapping.check_variant_layouts([same, other], ["a.xml", "b.xml"])


def test_variant_assignment_defaults_to_round_robin_and_is_checked() -> None:
    assert mapping.variant_assignment(None, 5, 2) == [0, 1, 0, 1, 0]
    with pytest.raises(ValueError, match="3 entries for 4 envs"):
        mapping.variant_assignment([0, 1, 1], 4, 2)
    with pytest.raises(ValueError, match=r"refers to variants \[2\]; there are 2"):
        mapping.variant_assignment([0, 2], 2, 2)


def test_targets_use_each_envs_own_variant() -> None:
    loose = mjcf_scan.scan(ARM)
    tight = mjcf_scan.scan(ARM.replace('ctrlrange="-.1 .2"', 'ctrlrange="-.01 .02"'))
    drives = [mapping.Drives(s, ["elbow", "shoulder"], MODES) for s in (loose, tight)]
    position, _ = mapping.CtrlMap(drives, [0, 1]).targets(np.full((2, 2), 0.5))
    assert position.tolist() == [[0.2], [0.02]]


# -- the same math in torch (the sim's device on the GPU pipeline) ---------------------------

def test_torch_conversions_match_numpy() -> None:
    """The sim runs StateMap and CtrlMap in torch; here on the CPU, against numpy."""
    torch = pytest.importorskip("torch", reason="torch is in the dev extras (`make test`)")
    arrays = mapping.TorchArrays(torch, "cpu")
    rng = np.random.default_rng(1)
    origins, com = rng.normal(size=(5, 3)) * 10, rng.normal(size=(5, 3)) * 0.1
    numpy_map = mapping.StateMap(True, [2, 0, 1], origins, com)
    torch_map = numpy_map.on(arrays)
    qpos, qvel = random_state(rng, 5, 3)
    rows = np.array([4, 1, 3])
    root, dof = numpy_map.to_engine(rows, qpos[rows], qvel[rows])
    troot, tdof = torch_map.to_engine(rows, torch.as_tensor(qpos[rows]), qvel[rows])
    assert troot.dtype == torch.float32 and tdof.dtype == torch.float32
    np.testing.assert_allclose(troot.numpy(), root, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tdof.numpy(), dof, rtol=1e-6)
    out = [np.zeros_like(qpos), np.zeros_like(qvel)]
    tout = [torch.zeros(qpos.shape, dtype=torch.float64), torch.zeros(qvel.shape,
                                                                       dtype=torch.float64)]
    numpy_map.from_engine(rows, root, dof, *out)
    torch_map.from_engine(torch.as_tensor(rows), troot, tdof, *tout)
    for got, want in zip(tout, out, strict=True):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
    scene = mjcf_scan.scan(ARM)
    drives = [mapping.Drives(scene, ["elbow", "shoulder"], MODES)]
    ctrl = np.array([[0.5, 2.0], [-0.05, -0.5], [0.1, 0.1]])
    want = mapping.CtrlMap(drives, [0, 0, 0]).targets(ctrl)
    got = mapping.CtrlMap(drives, [0, 0, 0], arrays).targets(torch.as_tensor(ctrl))
    for tensor, array in zip(got, want, strict=True):
        assert tensor.tolist() == array.tolist()


# -- options and report -----------------------------------------------------------------------

def test_options_default_to_the_gpu_pipeline_without_graphics() -> None:
    options = Options({}, 4)
    assert (options.pipeline, options.device, options.graphics) == ("gpu", 0, False)
    assert options.physx["solver_type"] == 1


@pytest.mark.parametrize(("raw", "message"), [
    ({"pipline": "cpu"}, "unknown isaacgym option\\(s\\) pipline"),
    ({"assignment": [0, 1]}, "assignment needs option variants"),
    ({"physx": {"solver_typ": 1}}, "unknown physx field"),
    ({"physx": {"contact_offset": "big"}}, "physx.contact_offset must be float"),
    ({"camera": {"envs": [9]}}, "camera envs must be env indices in \\[0, 4\\)"),
    ({"env_spacing": 0}, "env_spacing must be a positive"),
    ({"assignment": [0, 0, 0, 0]}, "assignment needs option variants"),
])
def test_options_refuse_bad_values_naming_them(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Options(raw, 4)


def test_graphics_work_on_either_pipeline() -> None:
    """IsaacGymEnvs renders with sim_device=cpu and a graphics device: not refused."""
    for raw in ({"pipeline": "cpu", "viewer": True}, {"pipeline": "cpu", "camera": {}}):
        assert Options(raw, 4).graphics


def test_env_indices_in_options_are_global_across_workers() -> None:
    """A worker of rows 4..7 of 8 keeps the cameras and variants of its own rows."""
    raw = {"camera": {"envs": [1, 5, 7]}, "variants": ["b.xml"],
           "assignment": [0, 0, 0, 0, 1, 0, 1, 1]}
    options = Options(raw, 8, range(4, 8))
    assert options.camera is not None and options.camera["envs"] == [1, 3]
    assert options.assignment == [1, 0, 1, 1]
    with pytest.raises(ValueError, match="one variant index per env \\(8\\)"):
        Options({**raw, "assignment": [0, 1]}, 8, range(4, 8))
    with pytest.raises(ValueError, match="pass workers=1"):
        Options({"viewer": True}, 8, range(4, 8))


def test_the_host_device_is_honoured_on_shared_memory() -> None:
    """Backend(device=N) reaches the shm plane's INIT as device.ordinal."""
    options = Options({}, 4)
    options.use_host_device({"device": {"ordinal": 1}})
    assert options.device == 1
    same = Options({"device": 1}, 4)
    same.use_host_device({"device": {"ordinal": 1}})
    assert same.device == 1
    with pytest.raises(ValueError, match="option device is 0 but Backend\\(device=1\\)"):
        Options({"device": 0}, 4).use_host_device({"device": {"ordinal": 1}})
    untouched = Options({"device": 2}, 4)
    untouched.use_host_device({})
    assert untouched.device == 2


UUID = bytes(range(16))


def test_the_data_plane_defaults_to_shared_memory_on_either_pipeline() -> None:
    for pipeline in ("gpu", "cpu"):
        assert Options({"pipeline": pipeline}, 4).choose_plane({}) == "shm"
    assert Options({}, 4).choose_plane({"data_plane": "cuda", "device": {"uuid": UUID}}) \
        == "cuda"


@pytest.mark.parametrize(("raw", "spec", "message"), [
    ({"pipeline": "cpu"}, {"data_plane": "cuda", "device": {"uuid": UUID}},
     "asks for pipeline='cpu'.*use options=\\{'pipeline': 'gpu'\\}, or data_plane='shm'"),
    ({}, {"data_plane": "nvlink"}, "data_plane must be one of"),
    ({}, {"data_plane": "cuda", "device": {"ordinal": 0}}, "needs device.uuid"),
])
def test_the_cuda_plane_is_refused_where_it_cannot_work(
        raw: dict[str, Any], spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Options(raw, 4).choose_plane(spec)


def test_the_sim_runs_on_the_cuda_arenas_gpu() -> None:
    options = Options({}, 4)
    options.place_on(2)  # no option device: the arena's GPU
    assert options.device == 2
    Options({"device": 1}, 4).place_on(1)  # the same GPU, given twice
    with pytest.raises(ValueError, match="option device is 0, but the CUDA arena is on this "
                                         "process's GPU 1"):
        Options({"device": 0}, 4).place_on(1)


def test_report_states_the_self_collision_policy_and_mjcf_excludes() -> None:
    report = mapping.configuration_report({"dt": 0.01}, "gpu", [], False, [("a", "b")], ["w"])
    assert report["collision"]["self_collision"] is False
    assert report["collision"]["actor_filter"] == 1
    assert "contained in self_collision=False" in report["collision"]["mjcf_excludes_note"]
    loose = mapping.configuration_report({}, "cpu", [], True, [("a", "b")], [])
    assert "NOT reproduced" in loose["collision"]["mjcf_excludes_note"]
    assert report["warnings"] == ["w"] and report["sim"] == {"dt": 0.01}
