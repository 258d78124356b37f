"""The SDK fake's utility modules on its Python 3.8: ``terrain_utils`` (height fields and
their triangle meshes, carrying a body through ``add_triangle_mesh``), ``gymutil`` and
``torch_utils`` as legged_gym and IsaacGymEnvs call them (fixtures/isaacgym_fake_patterns.py,
our own code in their style). Sources: docs/isaacgym.md ("Assets and utility modules of the
SDK fake").
"""

from __future__ import annotations

import pytest

from .test_isaacgym_fake import run_fake
from .test_isaacgym_fake_assets import fake


def test_terrain_generators_follow_the_documented_units(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        import numpy as np
        from isaacgym import terrain_utils as tu
        np.random.seed(3)
        def sub(**kw):
            return tu.SubTerrain("t", width=40, length=60, vertical_scale=0.005,
                                 horizontal_scale=0.1, **kw)
        fresh = sub()
        ramp = tu.sloped_terrain(sub(), slope=0.5).height_field_raw
        pyramid = tu.pyramid_sloped_terrain(sub(), slope=0.2, platform_size=1.0).height_field_raw
        stairs = tu.stairs_terrain(sub(), step_width=0.5, step_height=0.05).height_field_raw
        rings = tu.pyramid_stairs_terrain(sub(), 0.5, 0.05, platform_size=1.0).height_field_raw
        rough = tu.random_uniform_terrain(sub(), -0.05, 0.05, step=0.01,
                                          downsampled_scale=0.5).height_field_raw
        waves = tu.wave_terrain(sub(), num_waves=2, amplitude=0.2).height_field_raw
        blocks = tu.discrete_obstacles_terrain(sub(), 0.1, 0.5, 1.0, 20, 1.0).height_field_raw
        stones = tu.stepping_stones_terrain(sub(), 0.4, 0.2, 0.05, 1.0, depth=-1.0)
        print(json.dumps({
            "fresh": [list(fresh.height_field_raw.shape), str(fresh.height_field_raw.dtype),
                      int(abs(fresh.height_field_raw).max())],
            "ramp": [ramp[:, 0].tolist(), bool((ramp == ramp[:, :1]).all())],
            "pyramid": [int(pyramid[20, 30]), int(pyramid[0, 0]), int(pyramid.max()),
                        bool((np.diff(pyramid[:20, 30]) >= 0).all())],
            "stairs": stairs[:, 0].tolist(), "rings": rings[:, 30].tolist(),
            "rough": [int(rough.min()), int(rough.max()), len(np.unique(rough))],
            "waves": [int(waves.min()), int(waves.max())],
            "blocks": [sorted(int(v) for v in np.unique(blocks)),
                       int(abs(blocks[17:23, 27:33]).max())],
            "stones": [sorted(int(v) for v in np.unique(stones.height_field_raw)),
                       int(abs(stones.height_field_raw[17:23, 27:33]).max())],
        }))
    """)
    assert out["fresh"] == [[40, 60], "int16", 0]
    ramp, flat_across = out["ramp"]
    assert flat_across  # a ramp along x only
    assert all(abs(h - 0.5 * x * 0.1 / 0.005) <= 1 for x, h in enumerate(ramp))
    centre, corner, top, rising = out["pyramid"]
    assert corner == 0 and centre == top > 0 and rising
    assert out["stairs"] == [10 * (k // 5 + 1) for k in range(40)]  # 0.5 m deep, 0.05 m up
    rings = out["rings"]
    assert rings[0] == 0 and rings[5] == 10 and max(rings) == rings[20]
    assert out["rough"][0] >= -10 and out["rough"][1] <= 10 and out["rough"][2] > 5
    assert -40 <= out["waves"][0] < 0 < out["waves"][1] <= 40  # 0.1 m each way, per axis
    levels, platform = out["blocks"]
    assert set(levels) <= {-20, -10, 0, 10, 20} and len(levels) > 2 and platform == 0
    levels, platform = out["stones"]
    assert levels[0] == -200 and set(levels[1:]) <= set(range(-11, 10)) and platform == 0


def test_heightfield_trimesh_faces_up_and_steep_steps_turn_vertical(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        import numpy as np
        from isaacgym.terrain_utils import convert_heightfield_to_trimesh
        field = np.zeros((4, 3), dtype=np.int16)
        field[2:, :] = 100  # a 0.5 m step between rows 1 and 2
        result = {}
        for threshold in (None, 0.75):
            v, t = convert_heightfield_to_trimesh(field, 0.1, 0.005, threshold)
            a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
            normal_z = np.cross(b - a, c - a)[:, 2]
            result[str(threshold)] = {"shapes": [list(v.shape), list(t.shape)],
                                      "dtypes": [str(v.dtype), str(t.dtype)],
                                      "up": bool((normal_z >= -1e-9).all()),
                                      "row1_x": v[3:6, 0].tolist(), "z": v[:, 2].tolist()}
        print(json.dumps(result))
    """)
    plain, steep = out["None"], out["0.75"]
    for mesh in (plain, steep):
        assert mesh["shapes"] == [[12, 3], [12, 3]]  # rows*cols vertices, 2 per cell
        assert mesh["dtypes"] == ["float32", "uint32"]
        assert mesh["up"]
        assert mesh["z"] == pytest.approx([0.0] * 6 + [0.5] * 6)
    assert plain["row1_x"] == pytest.approx([0.1] * 3)
    assert steep["row1_x"] == pytest.approx([0.2] * 3)  # under the step's edge: vertical face


def test_legged_gym_and_isaacgymenvs_code_runs_against_the_fake(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        from isaacgym_fake_patterns import legged_gym_style, isaacgymenvs_style
        print(json.dumps({"lg": legged_gym_style(["--task", "flat", "--headless",
                                                  "--sim_device", "cpu", "--num_envs", "8"]),
                          "ige": isaacgymenvs_style()}))
    """)
    lg, ige = out["lg"], out["ige"]
    assert [lg["task"], lg["headless"], lg["num_envs"]] == ["flat", True, 8]
    assert lg["sim_device"] == ["cpu", 0] and lg["use_gpu_pipeline"] is False
    assert lg["dt"] == 0.005 and lg["gravity"] == pytest.approx([0.0, 0.0, -9.81])
    assert lg["up_axis_z"] and lg["position_iterations"] == 4
    assert lg["contact_collection"] == 2 and lg["gpu_contact_pairs"] == 2 ** 23
    assert lg["terrain_range"][0] < 0  # a pit (slope < 0) with noise on it
    assert lg["mesh"] == [[6400, 3], "float32", [2 * 79 * 79, 3], "uint32"]
    assert lg["gravity_vec"] == [0.0, 0.0, -1.0]
    assert lg["yaw_error"] < 1e-5 and max(lg["roll_pitch"]) < 1e-5
    assert lg["turned"][0] == [4, 5, 3] and lg["turned"][1] < 1e-5
    assert lg["reward"] == [4]
    assert lg["sphere"][0] == 32 and lg["sphere"][2] == pytest.approx(3.0, abs=0.02)
    centre, edge = ige["stairs"]
    assert edge == 0 and centre < 0 and ige["obstacles_platform"] == 0  # step_height < 0: down
    assert ige["stone_levels"] == [-2000, -1, 0]  # holes at the default depth, flat stones
    (q_id,), (t_id,) = ige["identity"]
    assert q_id == pytest.approx([0.0, 0.0, 0.0, 1.0], abs=1e-6)
    assert t_id == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)
    assert ige["conjugate"][0] == pytest.approx([0.0, 0.0, 0.0, 1.0], abs=1e-6)
    assert ige["spin"][0] == pytest.approx([0.0, 0.0, 1.0, 0.0], abs=1e-6)
    assert ige["axes"] == [3, [1.0, 0.0, 0.0]]
    assert ige["xml"] == "<mujoco>\n  <worldbody>\n    <body />\n  </worldbody>\n</mujoco>"
    assert ige["wrap"] == [True, True] and ige["gymtorch"]


def test_a_terrain_mesh_from_terrain_utils_carries_a_urdf_body(isaacgym_fake_python: str) -> None:
    # legged_gym's trimesh terrain: pyramid stairs -> convert_heightfield_to_trimesh ->
    # add_triangle_mesh with flattened arrays; a body dropped on the top platform rests there
    out = fake(isaacgym_fake_python, """
        from isaacgym import terrain_utils
        sub = terrain_utils.SubTerrain("t", width=40, length=40, vertical_scale=0.005,
                                       horizontal_scale=0.1)
        terrain_utils.pyramid_stairs_terrain(sub, step_width=0.5, step_height=0.1,
                                             platform_size=1.0)
        vertices, triangles = terrain_utils.convert_heightfield_to_trimesh(
            sub.height_field_raw, 0.1, 0.005, 0.75)
        gym, sim, asset = urdf_sim("fake_pkg/urdf/fake_cylinder.urdf", ground=False,
                                   thickness=0.0)
        mesh = gymapi.TriangleMeshParams()
        mesh.nb_vertices, mesh.nb_triangles = vertices.shape[0], triangles.shape[0]
        mesh.transform.p = gymapi.Vec3(-2.0, -2.0, 0.0)  # the terrain's centre at the origin
        gym.add_triangle_mesh(sim, vertices.flatten(order="C"), triangles.flatten(order="C"),
                              mesh)
        one_actor(gym, sim, asset, 1.0)
        assert gym.prepare_sim(sim)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        step(gym, sim, 400)
        gym.refresh_actor_root_state_tensor(sim)
        print(json.dumps({"top": float(sub.height_field_raw.max()) * 0.005,
                          "z": root[0, 2].item()}))
    """)
    assert out["top"] == pytest.approx(0.3)  # three steps of 0.1 m up to the platform
    assert out["z"] == pytest.approx(out["top"] + 0.15, abs=0.01)  # standing on it
