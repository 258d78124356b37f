"""The IsaacGym SDK fake (unisim.testing), run for real on its Python 3.8 interpreter.

Each test runs a snippet on the fake's Python (scenes in fixtures/isaacgym_fake_scenes.py)
that prints one JSON line; the assertions are here. Physics: MuJoCo on the same MJCF, in
the SDK's tensor layouts. Misuse: the fake raises (FakeError, a RuntimeError) where the SDK
fails too, reports by value (False, None, -1) where the SDK does, and warns where the SDK
accepts a likely mistake (docs/isaacgym.md, "Where the fake raises").
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run_fake(python: str, code: str, **env: str) -> Any:
    """Run ``code`` on the fake's Python; return the JSON its last stdout line holds."""
    result = subprocess.run(
        [python, "-c", "from isaacgym_fake_scenes import *\nimport json\n"
         + textwrap.dedent(code)], cwd=FIXTURES, capture_output=True, text=True, timeout=300,
        env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl"), **env},
        check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_free_body_falls_with_gravity_in_the_sdk_layout(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        gym, sim, envs, _ = build(BOX, num_envs=2, height=5.0)
        assert gym.prepare_sim(sim)
        t = tensors(gym, sim)
        before = t["actor_root_state"].clone()
        step(gym, sim, 50)
        unchanged = bool(torch.equal(before, t["actor_root_state"]))
        refresh(gym, sim)
        root = t["actor_root_state"]
        print(json.dumps({
            "unchanged_before_refresh": unchanged,
            "shapes": {k: list(v.shape) for k, v in t.items()},
            "dtypes": sorted({str(v.dtype) for v in t.values()}),
            "device": str(root.device), "z0": before[:, 2].tolist(), "z": root[:, 2].tolist(),
            "vz": root[:, 9].tolist(), "x": root[:, 0].tolist(),
            "origins": [[o.x, o.y, o.z] for o in map(gym.get_env_origin, envs)]}))
    """)
    assert out["unchanged_before_refresh"]  # acquired tensors change on refresh_* only
    assert out["shapes"] == {"actor_root_state": [2, 13], "dof_state": [0, 2],
                             "rigid_body_state": [4, 13], "net_contact_force": [4, 3]}
    assert out["dtypes"] == ["torch.float32"] and out["device"] == "cpu"
    t = 50 * 0.01
    for z0, z, vz in zip(out["z0"], out["z"], out["vz"], strict=True):
        assert z0 == pytest.approx(5.0)
        assert vz == pytest.approx(-9.81 * t, rel=1e-3)
        assert z == pytest.approx(5.0 - 9.81 * t * t / 2, abs=0.03)  # semi-implicit Euler
    # root positions are global: env origin + the actor's place in its env
    offsets = [x - o[0] for x, o in zip(out["x"], out["origins"], strict=True)]
    assert offsets == pytest.approx([0.0, 0.0])
    assert out["origins"][0] != out["origins"][1]


def test_quaternions_are_xyzw_and_body_states_follow_only_on_simulate(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        gym, sim, envs, _ = build(BOX, num_envs=1, ground=False, height=0.0)
        assert gym.prepare_sim(sim)
        t = tensors(gym, sim)
        root = t["actor_root_state"]
        root[0, 3:7] = torch.tensor([0.0, 0.0, 0.70710678, 0.70710678])  # 90 deg about z, xyzw
        root[0, 7:13] = 0.0
        gym.set_actor_root_state_tensor(sim, gymtorch.unwrap_tensor(root))
        refresh(gym, sim)
        stale = t["rigid_body_state"][1, 0:3].tolist()
        read_back = root[0, 3:7].tolist()
        gym.simulate(sim)
        refresh(gym, sim)
        print(json.dumps({"stale_marker": stale, "root_quat": read_back,
                          "marker": t["rigid_body_state"][1, 0:3].tolist(),
                          "body_quat": t["rigid_body_state"][0, 3:7].tolist()}))
    """)
    assert out["root_quat"] == pytest.approx([0, 0, 0.7071068, 0.7071068], abs=1e-6)
    assert out["stale_marker"] == pytest.approx([1.0, 0.0, 0.0], abs=1e-6)  # until simulate
    assert out["marker"] == pytest.approx([0.0, 1.0, 0.0], abs=1e-3)  # child at x=1, turned
    assert out["body_quat"] == pytest.approx([0, 0, 0.7071068, 0.7071068], abs=1e-4)


def test_dof_drive_modes_move_a_hinge_as_the_sdk_describes(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        results = {}
        for mode, extra in (("POS", {"stiffness": 20.0, "damping": 2.0}), ("EFFORT", {}),
                            ("NONE", {})):
            drive = dict(driveMode=int(getattr(gymapi, "DOF_MODE_" + mode)), **extra)
            gym, sim, envs, _ = build(HINGE, num_envs=2, fixed=True, ground=False, drive=drive)
            assert gym.prepare_sim(sim)
            t = tensors(gym, sim)
            command = torch.tensor([0.5, 1.0], dtype=torch.float32)
            if mode == "EFFORT":
                gym.set_dof_actuation_force_tensor(sim, gymtorch.unwrap_tensor(command))
            else:
                gym.set_dof_position_target_tensor(sim, gymtorch.unwrap_tensor(command))
            step(gym, sim, 300 if mode == "POS" else 10)
            refresh(gym, sim)
            results[mode] = t["dof_state"].tolist()
            gym.destroy_sim(sim)
        print(json.dumps(results))
    """)
    assert [pos for pos, _ in out["POS"]] == pytest.approx([0.5, 1.0], abs=0.01)
    # effort: a torque tau on the arm (inertia about the axis I) for 0.1 s gives tau/I * t
    (_, v1), (_, v2) = out["EFFORT"]
    assert v1 > 0 and v2 == pytest.approx(2 * v1, rel=1e-3)
    assert out["NONE"] == [[0.0, 0.0], [0.0, 0.0]]  # no drive: the target is ignored


def test_contact_forces_carry_the_weight_of_a_resting_box(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        gym, sim, envs, _ = build(BOX, num_envs=1, height=0.1)
        assert gym.prepare_sim(sim)
        t = tensors(gym, sim)
        step(gym, sim, 200)
        refresh(gym, sim)
        masses = [p.mass for p in gym.get_actor_rigid_body_properties(envs[0], 0)]
        shapes = gym.get_actor_rigid_shape_properties(envs[0], 0)
        print(json.dumps({"force": t["net_contact_force"].tolist(), "mass": sum(masses),
                          "friction": [p.friction for p in shapes]}))
    """)
    assert out["friction"] == [1.0, 1.0]  # MuJoCo's default sliding friction, per shape
    box, marker = out["force"]
    assert box[2] == pytest.approx(out["mass"] * 9.81, rel=0.02)  # the marker rests on it
    assert marker == [0.0, 0.0, 0.0]  # the marker touches nothing (it floats beside the box)


def test_camera_images_have_the_sdk_layout_and_change_only_when_rendered(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        gym, sim, envs, cams = build(BOX, num_envs=2, graphics=0, camera=(64, 48), height=0.1)
        assert gym.prepare_sim(sim)
        gym.set_camera_location(cams[0], envs[0], gymapi.Vec3(1.5, 1.5, 1.0),
                                gymapi.Vec3(0, 0, 0))
        black = gym.get_camera_image(sim, envs[0], cams[0], gymapi.IMAGE_COLOR)
        gym.step_graphics(sim)
        gym.render_all_camera_sensors(sim)
        color = gym.get_camera_image(sim, envs[0], cams[0], gymapi.IMAGE_COLOR)
        depth = gym.get_camera_image(sim, envs[0], cams[0], gymapi.IMAGE_DEPTH)
        print(json.dumps({"black": int(black.max()), "shape": list(color.shape),
                          "dtype": str(color.dtype),
                          "alpha": sorted(set(color[:, 3::4].ravel().tolist())),
                          "mean": float(color.reshape(48, 64, 4)[:, :, :3].mean()),
                          "colours": len(set(map(tuple, color.reshape(-1, 4).tolist()))),
                          "depth": [list(depth.shape), str(depth.dtype), float(depth[24, 32])]}))
    """)
    assert out["black"] == 0  # nothing rendered yet
    assert out["shape"] == [48, 64 * 4] and out["dtype"] == "uint8"  # (H, W*4) RGBA
    assert out["alpha"] == [255] and out["mean"] > 5 and out["colours"] > 10  # a scene
    shape, dtype, centre = out["depth"]
    assert shape == [48, 64] and dtype == "float32" and -3.0 < centre < 0  # negative depth


def test_misuse_raises_or_returns_false(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        results = {}
        def outcome(name, call):
            try:
                results[name] = repr(call())
            except RuntimeError as exc:
                results[name] = "raised: %s" % exc
        gym, sim, envs, _ = build(HINGE, num_envs=2, fixed=True)
        outcome("acquire_before_prepare", lambda: gym.acquire_dof_state_tensor(sim))
        outcome("camera_without_graphics",
                lambda: gym.create_camera_sensor(envs[0], gymapi.CameraProperties()))
        outcome("viewer_without_graphics",
                lambda: gym.create_viewer(sim, gymapi.CameraProperties()))
        props = gym.get_actor_dof_properties(envs[0], 0)
        outcome("dof_props_wrong_length",
                lambda: gym.set_actor_dof_properties(envs[0], 0, props[:0]))
        assert gym.prepare_sim(sim)
        dofs = gymtorch.wrap_tensor(gym.acquire_dof_state_tensor(sim))
        ids = torch.tensor([1], dtype=torch.int32)
        unwrap = gymtorch.unwrap_tensor
        setter = gym.set_dof_state_tensor_indexed
        outcome("int64_indices", lambda: setter(sim, unwrap(dofs), unwrap(ids.long()), 1))
        outcome("float64_state", lambda: setter(sim, unwrap(dofs.double()), unwrap(ids), 1))
        outcome("wrong_shape", lambda: setter(sim, unwrap(torch.zeros(2, 3)), unwrap(ids), 1))
        outcome("wrong_device",
                lambda: setter(sim, unwrap(dofs.to("meta")), unwrap(ids), 1))
        outcome("int32_indices", lambda: setter(sim, unwrap(dofs), unwrap(ids), 1))
        outcome("same_setter_twice", lambda: setter(sim, unwrap(dofs), unwrap(ids), 1))
        gym.destroy_sim(sim)
        outcome("after_destroy", lambda: gym.simulate(sim))
        params = gymapi.SimParams()
        params.up_axis = gymapi.UP_AXIS_Z
        params.use_gpu_pipeline = True
        results["gpu_sim"] = repr(gym.create_sim(0, -1, gymapi.SIM_PHYSX, params))
        results["cuda"] = torch.cuda.is_available()
        print(json.dumps(results))
    """)
    raised = [name for name, value in out.items() if str(value).startswith("raised")]
    assert sorted(raised) == sorted([
        "int64_indices", "float64_state", "wrong_shape", "wrong_device", "after_destroy"]), out
    assert "int32" in out["int64_indices"]
    # what the SDK accepts or reports by value (docs/isaacgym.md, "Where the fake raises")
    assert out["acquire_before_prepare"].startswith("<isaacgym._types.Tensor")
    assert out["camera_without_graphics"] == "-1" and out["viewer_without_graphics"] == "None"
    assert out["dof_props_wrong_length"] == "False"  # the SDK documents a bool result
    assert out["int32_indices"] == out["same_setter_twice"] == "True"
    if not out["cuda"]:
        assert out["gpu_sim"] == "None"  # no CUDA: the GPU pipeline is refused


def test_torch_before_isaacgym_is_refused_as_by_the_sdk(isaacgym_fake_python: str) -> None:
    result = subprocess.run([isaacgym_fake_python, "-c", "import torch, isaacgym"],
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode != 0 and "PyTorch was imported before isaacgym" in result.stderr


def test_the_trace_and_a_headless_viewer_that_closes(isaacgym_fake_python: str,
                                                     tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    out = run_fake(isaacgym_fake_python, """
        gym, sim, envs, _ = build(BOX, num_envs=1, graphics=0)
        assert gym.prepare_sim(sim)
        viewer = gym.create_viewer(sim, gymapi.CameraProperties())
        closed = []
        for _ in range(3):
            step(gym, sim)
            closed.append(gym.query_viewer_has_closed(viewer))
            gym.step_graphics(sim)
            gym.draw_viewer(viewer, sim, True)
        gym.destroy_viewer(viewer)
        gym.destroy_sim(sim)
        print(json.dumps({"closed": closed}))
    """, ISAACGYM_FAKE_TRACE=str(trace), ISAACGYM_FAKE_VIEWER_CLOSES_AFTER="2")
    assert out["closed"] == [False, False, True]
    calls = trace.read_text().split()
    assert calls[calls.index("create_viewer"):] == [
        "create_viewer", *["simulate", "fetch_results", "query_viewer_has_closed",
                           "step_graphics", "draw_viewer"] * 3, "destroy_viewer", "destroy_sim"]


def test_torch_utils_and_gymutil_helpers(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        import math, sys
        from isaacgym import gymutil, torch_utils as tu
        q = tu.quat_from_euler_xyz(torch.tensor([0.3]), torch.tensor([-0.2]),
                                   torch.tensor([math.pi / 2]))
        v = torch.tensor([[1.0, 0.5, -0.25]])
        sdk = gymapi.Quat(*q[0].tolist()).rotate(gymapi.Vec3(*v[0].tolist()))
        sys.argv = ["train.py", "--sim_device", "cuda:1", "--pipeline", "cpu", "--task", "x"]
        args = gymutil.parse_arguments(custom_parameters=[
            {"name": "--task", "type": str, "default": "anymal"}])
        print(json.dumps({
            "yaw": tu.quat_from_euler_xyz(*[torch.tensor([a]) for a in (0.0, 0.0, math.pi / 2)])
                     .tolist(),
            "rotated": tu.quat_apply(q, v).tolist(), "sdk": [sdk.x, sdk.y, sdk.z],
            "back": tu.quat_rotate_inverse(q, tu.quat_rotate(q, v)).tolist(),
            "euler": [float(a) for a in tu.get_euler_xyz(q)],
            "identity": tu.quat_mul(q, tu.quat_conjugate(q)).tolist(),
            "device": list(gymutil.parse_device_str("cuda:1")),
            "args": [args.sim_device_type, args.compute_device_id, args.use_gpu_pipeline,
                     args.use_gpu, int(args.physics_engine) == int(gymapi.SIM_PHYSX), args.task],
        }))
    """)
    assert out["yaw"] == [pytest.approx([0, 0, 0.7071068, 0.7071068], abs=1e-6)]  # xyzw
    assert out["rotated"][0] == pytest.approx(out["sdk"], abs=1e-5)  # as gymapi.Quat does
    assert out["back"] == [pytest.approx([1.0, 0.5, -0.25], abs=1e-5)]
    assert out["euler"] == pytest.approx([0.3, 2 * 3.14159265 - 0.2, 3.14159265 / 2], abs=1e-5)
    assert out["identity"] == [pytest.approx([0, 0, 0, 1], abs=1e-6)]
    assert out["device"] == ["cuda", 1]
    assert out["args"] == ["cuda", 1, False, True, True, "x"]


def test_asset_shape_friction_reaches_the_actors_created_after(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        gym = gymapi.acquire_gym()
        params = gymapi.SimParams()
        params.up_axis = gymapi.UP_AXIS_Z
        sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
        asset = load(gym, sim, BOX, gymapi.AssetOptions())
        shapes = gym.get_asset_rigid_shape_properties(asset)
        frictions = []
        for value in (0.3, 0.7):  # legged_gym's friction randomisation, env by env
            for props in shapes:
                props.friction = value
            assert gym.set_asset_rigid_shape_properties(asset, shapes)
            env = gym.create_env(sim, gymapi.Vec3(-1, -1, 0), gymapi.Vec3(1, 1, 1), 2)
            gym.create_actor(env, asset, gymapi.Transform(), "box", 0, 1)
            frictions.append([p.friction for p in gym.get_actor_rigid_shape_properties(env, 0)])
        print(json.dumps({"frictions": frictions,
                          "short": gym.set_asset_rigid_shape_properties(asset, shapes[:1])}))
    """)
    assert out["frictions"] == [pytest.approx([0.3, 0.3]), pytest.approx([0.7, 0.7])]
    assert out["short"] is False
