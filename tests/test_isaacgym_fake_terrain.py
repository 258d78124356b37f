"""The SDK fake's terrain (issue 44): legged_gym's triangle-mesh terrain collides where the
task's height samples say, stair risers stay steep, and each env holds a window of the
terrain around its actors rather than a copy of all of it. Snippets run on the fake's
Python 3.8 (``run_fake``); docs/isaacgym.md, "Assumptions of the SDK fake".
"""

from __future__ import annotations

import textwrap

import pytest

from .test_isaacgym_fake import run_fake

# legged_gym's terrain path: int16 samples (x along the first axis), made a trimesh with
# its slope_threshold (0.75) and added as _create_trimesh adds it
TERRAIN = """
import mujoco
import numpy as np
from isaacgym import terrain_utils
CUBE = '''<mujoco><worldbody><body name="cube"><geom type="box" size="0.1 0.1 0.1" mass="1"/>
</body></worldbody></mujoco>'''
SLAB = CUBE.replace("0.1 0.1 0.1", "0.1 0.1 0.04")  # low: friction does not tip it over
HORIZONTAL, VERTICAL = 0.1, 0.005
def terrain(width, length):
    return terrain_utils.SubTerrain("t", width=width, length=length,
                                    vertical_scale=VERTICAL, horizontal_scale=HORIZONTAL)
def terrain_sim(samples, envs, xml=CUBE):
    '''A sim with ``samples`` as legged_gym's trimesh terrain, and an env per list of
    ``envs`` with a cube at each (x, y, z) of it (world frame; every env origin at 0, as
    legged_gym places its envs).'''
    gym = gymapi.acquire_gym()
    params = gymapi.SimParams()
    params.up_axis, params.substeps, params.dt = gymapi.UP_AXIS_Z, 1, 0.005
    params.gravity = gymapi.Vec3(0.0, 0.0, -9.81)
    sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
    vertices, triangles = terrain_utils.convert_heightfield_to_trimesh(
        samples, HORIZONTAL, VERTICAL, 0.75)
    mesh = gymapi.TriangleMeshParams()
    mesh.nb_vertices, mesh.nb_triangles = vertices.shape[0], triangles.shape[0]
    mesh.static_friction = mesh.dynamic_friction = 1.0
    gym.add_triangle_mesh(sim, vertices.flatten(), triangles.flatten(), mesh)
    asset = load(gym, sim, xml, gymapi.AssetOptions())
    zero = gymapi.Vec3(0.0, 0.0, 0.0)
    for places in envs:
        env = gym.create_env(sim, zero, zero, 1)
        for x, y, z in places:
            gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(x, y, z)), "c", 0, 0)
    assert gym.prepare_sim(sim)
    return gym, sim
def surface(sim, env, points):
    '''The height of the env's collision surface under each (x, y) of ``points`` (world
    frame): a ray cast down from 10 m that sees the ground only (not the env's cube).'''
    state = sim._state.envs[env]
    model, data = state.physics()
    hit, down = np.zeros(1, dtype=np.int32), np.array([0.0, 0.0, -1.0])
    return [10.0 - mujoco.mj_ray(model, data, np.array([x, y, 10.0]) - state.origin, down,
                                 None, 1, 1, hit) for x, y in points]
"""


def with_terrain(code: str) -> str:
    return TERRAIN + textwrap.dedent(code)


def test_a_box_slid_against_a_stair_riser_stops_at_it(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_terrain("""
    stairs = terrain(40, 20)  # 4 m along x, 2 m along y
    terrain_utils.stairs_terrain(stairs, step_width=1.0, step_height=0.1)
    # treads 1 m deep, 10 cm apart (steeper than slope_threshold: the mesh's riser is
    # vertical), the first riser at x = 1.0, from 0.1 m to 0.2 m
    gym, sim = terrain_sim(stairs.height_field_raw, [[(0.8, 1.0, 0.141)]], SLAB)
    root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
    gym.refresh_actor_root_state_tensor(sim)
    root[0, 7] = 2.5  # sliding towards the riser, 10 cm ahead: 2 m/s when it gets there
    gym.set_actor_root_state_tensor(sim, gymtorch.unwrap_tensor(root))
    farthest = 0.0
    for _ in range(60):
        step(gym, sim, 5)
        gym.refresh_actor_root_state_tensor(sim)
        farthest = max(farthest, root[0, 0].item())
    print(json.dumps({"farthest": farthest, "x": root[0, 0].item(), "z": root[0, 2].item(),
                      "vx": root[0, 7].item()}))
    """))
    # PhysX collides with the mesh's vertical riser: the box's front face (x + 0.1) gets
    # to it and no farther, and the box stays on the lower tread (centre 0.1 + 0.04 high)
    assert out["farthest"] + 0.1 == pytest.approx(1.0, abs=0.03)
    assert out["x"] + 0.1 < 1.0
    assert out["z"] == pytest.approx(0.14, abs=0.005)
    assert abs(out["vx"]) < 0.01


def test_the_collision_surface_is_the_height_samples(isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_terrain("""
    np.random.seed(3)
    rough = terrain(36, 36)  # legged_gym's terrain kinds side by side, 3.6 m square
    part = terrain(12, 36)
    terrain_utils.random_uniform_terrain(part, -0.05, 0.05, 0.005, downsampled_scale=0.2)
    rough.height_field_raw[0:12] = part.height_field_raw
    part = terrain(12, 36)
    terrain_utils.pyramid_stairs_terrain(part, step_width=0.3, step_height=0.12,
                                         platform_size=0.6)
    rough.height_field_raw[12:24] = part.height_field_raw
    part = terrain(12, 36)
    terrain_utils.discrete_obstacles_terrain(part, 0.15, 0.2, 0.6, 20, platform_size=0.6)
    rough.height_field_raw[24:36] = part.height_field_raw
    samples = rough.height_field_raw
    gym, sim = terrain_sim(samples, [[(1.8, 1.8, 1.0)]])
    inner = [(i, j) for i in range(1, 35) for j in range(1, 35)]
    at_samples = surface(sim, 0, [(i * HORIZONTAL, j * HORIZONTAL) for i, j in inner])
    # legged_gym reads a point's height as the lowest of three samples around it
    # (_get_heights); on flat-topped steps the mesh is that height across the cell
    steps = [(i, j) for i, j in inner if 12 <= i < 23]
    centres = surface(sim, 0, [((i + 0.5) * HORIZONTAL, (j + 0.5) * HORIZONTAL)
                               for i, j in steps])
    lowest = [min(samples[i, j], samples[i + 1, j], samples[i, j + 1]) * VERTICAL
              for i, j in steps]
    print(json.dumps({"samples": [float(samples[i, j]) * VERTICAL for i, j in inner],
                      "at_samples": at_samples, "lowest": lowest, "centres": centres}))
    """))
    at_samples = [abs(a - b) for a, b in zip(out["at_samples"], out["samples"], strict=True)]
    assert max(at_samples) <= 0.005, (sum(d > 0.005 for d in at_samples), max(at_samples))
    centres = [abs(a - b) for a, b in zip(out["centres"], out["lowest"], strict=True)]
    assert max(centres) <= 0.005, (sum(d > 0.005 for d in centres), max(centres))


def test_each_env_holds_a_window_of_the_terrain_that_follows_its_actor(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_terrain("""
    field = terrain(400, 300)  # 40 m x 30 m; a 0.5 m plateau in a 2 m square at (30, 20)
    field.height_field_raw[290:310, 190:210] = 100
    gym, sim = terrain_sim(field.height_field_raw, [[(5.0, 5.0, 0.2)], [(6.0, 5.0, 0.2)]])
    model = sim._state.envs[0].model
    held = [int(sim._state.envs[k].model.nhfielddata) for k in range(2)]
    step(gym, sim, 20)
    root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
    gym.refresh_actor_root_state_tensor(sim)
    root[0, 0:3] = torch.tensor([30.0, 20.0, 0.7])  # reset onto the plateau, 25 m away
    gym.set_actor_root_state_tensor(sim, gymtorch.unwrap_tensor(root))
    step(gym, sim, 200)
    gym.refresh_actor_root_state_tensor(sim)
    print(json.dumps({"held": held, "z": root[:, 2].tolist()}))
    """))
    fine = (400 - 1) * 2 + 1, (300 - 1) * 2 + 1  # samples of the whole terrain, refined
    assert max(out["held"]) < fine[0] * fine[1] / 20  # each env: a window, not the terrain
    on_plateau, on_floor = out["z"]
    assert on_plateau == pytest.approx(0.6, abs=0.01)  # the window went along
    assert on_floor == pytest.approx(0.1, abs=0.01)


def test_an_env_whose_actors_spread_wider_than_a_window_gets_a_wider_one(
        isaacgym_fake_python: str) -> None:
    out = run_fake(isaacgym_fake_python, with_terrain("""
    field = terrain(300, 300)  # 30 m square, a 0.5 m plateau in a 2 m square at (20, 10)
    field.height_field_raw[190:210, 90:110] = 100
    # two cubes of one env, 10 m apart: more than the first window (4 m) holds
    gym, sim = terrain_sim(field.height_field_raw, [[(10.0, 10.0, 0.8), (20.0, 10.0, 0.8)]])
    step(gym, sim, 150)
    root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
    gym.refresh_actor_root_state_tensor(sim)
    print(json.dumps({"z": root[:, 2].tolist(), "extent": sim._state.envs[0].extent}))
    """))
    assert out["extent"] >= 10.0  # the window spans both cubes
    floor, plateau = out["z"]
    assert floor == pytest.approx(0.1, abs=0.01) and plateau == pytest.approx(0.6, abs=0.01)


def test_a_camera_sees_the_terrain_where_the_window_moved_to(
        isaacgym_fake_python: str) -> None:
    # A renderer uploads the height fields once; the window's data is rewritten in place
    # when it follows an actor, and the camera must see the terrain it holds now.
    out = run_fake(isaacgym_fake_python, with_terrain("""
    field = terrain(400, 300)  # a 0.5 m plateau in a 2 m square at (30, 20), as above
    field.height_field_raw[290:310, 190:210] = 100
    gym = gymapi.acquire_gym()
    params = gymapi.SimParams()
    params.up_axis, params.gravity = gymapi.UP_AXIS_Z, gymapi.Vec3(0.0, 0.0, -9.81)
    sim = gym.create_sim(0, 0, gymapi.SIM_PHYSX, params)
    vertices, triangles = terrain_utils.convert_heightfield_to_trimesh(
        field.height_field_raw, HORIZONTAL, VERTICAL, 0.75)
    mesh = gymapi.TriangleMeshParams()
    mesh.nb_vertices, mesh.nb_triangles = vertices.shape[0], triangles.shape[0]
    gym.add_triangle_mesh(sim, vertices.flatten(), triangles.flatten(), mesh)
    asset = load(gym, sim, CUBE, gymapi.AssetOptions())
    zero = gymapi.Vec3(0.0, 0.0, 0.0)
    env = gym.create_env(sim, zero, zero, 1)
    gym.create_actor(env, asset, gymapi.Transform(gymapi.Vec3(5.0, 5.0, 0.2)), "c", 0, 0)
    props = gymapi.CameraProperties()
    props.width, props.height = 32, 32
    camera = gym.create_camera_sensor(env, props)
    assert gym.prepare_sim(sim)
    def depth_below(x, y):  # the depth 3 m above (x, y), looking (almost) straight down
        gym.set_camera_location(camera, env, gymapi.Vec3(x, y, 3.0),
                                gymapi.Vec3(x, y + 0.01, 0.0))
        step(gym, sim, 2)
        gym.step_graphics(sim)
        gym.render_all_camera_sensors(sim)
        image = gym.get_camera_image(sim, env, camera, gymapi.IMAGE_DEPTH)
        return float(image[16, 16])
    floor = depth_below(5.6, 5.0)
    root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
    gym.refresh_actor_root_state_tensor(sim)
    root[0, 0:3] = torch.tensor([30.0, 20.0, 0.7])  # onto the plateau: the window follows
    gym.set_actor_root_state_tensor(sim, gymtorch.unwrap_tensor(root))
    print(json.dumps({"floor": floor, "plateau": depth_below(30.6, 19.6)}))
    """))
    assert out["floor"] == pytest.approx(-3.0, abs=0.02)  # the floor at z = 0
    assert out["plateau"] == pytest.approx(-2.5, abs=0.02)  # the plateau at z = 0.5
