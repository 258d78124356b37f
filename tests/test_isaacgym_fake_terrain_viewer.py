"""The SDK fake's terrain and viewer calls (issue 37): legged_gym's height fields and
triangle meshes, and the viewer and colour calls its tasks make even headless. Snippets run
on the fake's Python 3.8 (``run_fake``), as in test_isaacgym_fake_fidelity.
"""

from __future__ import annotations

import pytest

from .test_isaacgym_fake import run_fake
from .test_isaacgym_fake_fidelity import with_stack


def test_height_fields_and_terrain_meshes_carry_actors_where_legged_gym_expects(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_stack("""
    import numpy as np
    def drop(add_terrain, places):
        gym = gymapi.acquire_gym()
        params = gymapi.SimParams()
        params.up_axis, params.gravity = gymapi.UP_AXIS_Z, gymapi.Vec3(0.0, 0.0, -9.81)
        sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
        add_terrain(gym, sim)
        asset = load(gym, sim, CUBE, gymapi.AssetOptions())
        zero = gymapi.Vec3(0.0, 0.0, 0.0)
        for x, y in places:  # legged_gym: every env at the origin, actors placed in world
            env = gym.create_env(sim, zero, zero, 1)
            gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(x, y, 1.0)), "c", 0, 0)
        assert gym.prepare_sim(sim)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        step(gym, sim, 150)
        gym.refresh_actor_root_state_tensor(sim)
        return [round(z, 3) for z in root[:, 2].tolist()]
    def field(gym, sim):
        samples = np.zeros((5, 5), dtype=np.int16)  # legged_gym's heightsamples[x, y]
        samples[3:, :] = 80  # a plateau 0.4 m high for x >= 0.5
        params = gymapi.HeightFieldParams()
        params.row_scale = params.column_scale = 0.5
        params.vertical_scale = 0.005
        params.nbRows, params.nbColumns = samples.shape[1], samples.shape[0]
        params.transform.p = gymapi.Vec3(-1.0, -1.0, 0.0)
        gym.add_heightfield(sim, samples, params)
    def mesh(gym, sim):
        vertices = np.array([[-1, -1, 0.3], [1, -1, 0.3], [1, 1, 0.3], [-1, 1, 0.3]],
                            dtype=np.float32)
        triangles = np.array([[0, 1, 2], [0, 2, 3]], dtype=np.uint32)
        params = gymapi.TriangleMeshParams()
        params.nb_vertices, params.nb_triangles = 4, 2
        gym.add_triangle_mesh(sim, vertices.flatten(), triangles.flatten(), params)
    print(json.dumps({"field": drop(field, [(0.75, 0.0), (-0.75, 0.0), (-0.75, 0.75)]),
                      "mesh": drop(mesh, [(0.0, 0.0)])}))
    """))
    plateau, low, low_too = out["field"]
    assert plateau == pytest.approx(0.5, abs=0.02)  # on the plateau: x >= 0.5, any y
    assert low == pytest.approx(0.1, abs=0.02) and low_too == pytest.approx(0.1, abs=0.02)
    assert out["mesh"] == [pytest.approx(0.4, abs=0.02)]  # on the mesh's surface


def test_viewer_lines_body_colours_frame_count_and_counts(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
    from isaacgym import gymutil
    results = {}
    def outcome(name, call):
        try:
            results[name] = repr(call())
        except RuntimeError as exc:
            results[name] = "raised: %s" % exc
    gym, sim, envs, cams = build(BOX, num_envs=1, graphics=0, camera=(32, 24), height=0.1)
    assert gym.prepare_sim(sim)
    viewer = gym.create_viewer(sim, gymapi.CameraProperties())
    lines = torch.zeros(12).numpy()
    gym.add_lines(viewer, None, 2, lines, torch.ones(6).numpy())
    gymutil.draw_line(gymapi.Vec3(0, 0, 0), gymapi.Vec3(1, 0, 0), gymapi.Vec3(1, 0, 0), gym,
                      viewer, envs[0])  # the Vec3-array overload, as legged_gym draws
    outcome("short_lines", lambda: gym.add_lines(viewer, envs[0], 3, lines, torch.ones(9).numpy()))
    gym.clear_lines(viewer)
    gym.set_camera_location(cams[0], envs[0], gymapi.Vec3(0.6, 0.6, 0.5), gymapi.Vec3(0, 0, 0))
    def image():
        gym.step_graphics(sim)
        gym.render_all_camera_sensors(sim)
        rgba = gym.get_camera_image(sim, envs[0], cams[0], gymapi.IMAGE_COLOR)
        return rgba.reshape(24, 32, 4)[:, :, :3].astype(float)
    before = image()
    gym.set_rigid_body_color(envs[0], 0, 0, gymapi.MESH_VISUAL, gymapi.Vec3(1.0, 0.0, 0.0))
    after = image()
    colour = gym.get_rigid_body_color(envs[0], 0, 0, gymapi.MESH_VISUAL)
    outcome("bad_body", lambda: gym.set_rigid_body_color(envs[0], 0, 5, gymapi.MESH_VISUAL,
                                                         gymapi.Vec3(1, 0, 0)))
    frames = [gym.get_frame_count(sim)]
    step(gym, sim, 3)
    frames.append(gym.get_frame_count(sim))
    results.update({
        "colour": [colour.x, colour.y, colour.z], "frames": frames,
        "redder": float(((after[:, :, 0] - after[:, :, 1:].mean(axis=2))
                         - (before[:, :, 0] - before[:, :, 1:].mean(axis=2))).max()),
        "counts": [gym.get_actor_rigid_shape_count(envs[0], 0), gym.get_env_dof_count(envs[0]),
                   gym.get_env_rigid_body_count(envs[0])],
        "tendons": [gym.get_actor_tendon_count(envs[0], 0),
                    gym.get_actor_tendon_properties(envs[0], 0),
                    gym.set_actor_tendon_properties(envs[0], 0, [])]})
    print(json.dumps(results))
    """)
    assert out["short_lines"].startswith("raised") and "18 vertex floats" in out["short_lines"]
    assert out["colour"] == [1.0, 0.0, 0.0] and out["redder"] > 50  # the box turned red
    assert out["bad_body"] == "None"  # logged, nothing set: the SDK returns None
    assert out["frames"] == [0, 3]  # one frame per simulate (VecTask's randomisation clock)
    assert out["counts"] == [2, 0, 2]
    assert out["tendons"] == [0, [], True]  # IsaacGymEnvs' dr_utils names these calls
