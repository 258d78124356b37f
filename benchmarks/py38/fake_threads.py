"""The SDK fake's env-steps per second at several thread counts, on one scene, in one process.

Run on the fake's interpreter (``unisim.testing.isaacgym_fake_python``):

    python fake_threads.py SCENE NUM_ENVS STEPS ROUNDS THREADS [THREADS ...]

SCENE is ``plane`` or ``rough``: the CI quadruped (examples/isaacgym_tasks/assets, 8 DOFs,
effort drives) on a plane, or on legged_gym-style rough terrain (random heights and
pyramid stairs, a triangle mesh). One env step is legged_gym's: 4 simulates of 5 ms, each
after PD torques computed from the DOF states (``set_dof_actuation_force_tensor``,
``simulate``, ``fetch_results``, ``refresh_dof_state_tensor``), then the root states and
net contact forces refreshed. The sim is built once; each round sets
``UNISIM_FAKE_THREADS`` (read by the fake at each simulate) to each thread count in turn
and times STEPS env steps. Prints the folder ``isaacgym`` came from (``{"isaacgym": path}``),
then one JSON line per round: ``{"THREADS": seconds}``. A fake without threads (an earlier
revision's) ignores ``UNISIM_FAKE_THREADS``: run it with one count.
"""

import json
import os
import sys
import time

import numpy as np

# isort: off
from isaacgym import gymapi, gymtorch, terrain_utils  # the SDK (and its fake) before torch
import torch
# isort: on

HERE = os.path.dirname(os.path.abspath(__file__))
ASSETS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "isaacgym_tasks",
                      "assets")
DECIMATION, DT = 4, 0.005
KP, KD, SCALE = 20.0, 0.5, 0.25
TILE, HORIZONTAL, VERTICAL = 8.0, 0.1, 0.005  # legged_gym's terrain cfg


def rough_terrain(gym, sim, tiles):
    """``tiles`` x ``tiles`` legged_gym tiles, random heights and pyramid stairs alternating;
    returns the terrain's size (m)."""
    size = int(TILE / HORIZONTAL)
    heights = np.zeros((tiles * size, tiles * size), dtype=np.int16)
    np.random.seed(0)  # terrain_utils draws from numpy's global generator, as the SDK's does
    rng = np.random.RandomState(0)
    for i in range(tiles):
        for j in range(tiles):
            tile = terrain_utils.SubTerrain(width=size, length=size, vertical_scale=VERTICAL,
                                            horizontal_scale=HORIZONTAL)
            if (i + j) % 2:
                terrain_utils.pyramid_stairs_terrain(tile, step_width=0.4,
                                                     step_height=0.05 + 0.1 * rng.rand())
            else:
                terrain_utils.random_uniform_terrain(tile, min_height=-0.05, max_height=0.05,
                                                     step=0.005, downsampled_scale=0.2)
            heights[i * size:(i + 1) * size, j * size:(j + 1) * size] = tile.height_field_raw
    vertices, triangles = terrain_utils.convert_heightfield_to_trimesh(
        heights, HORIZONTAL, VERTICAL, 0.75)
    params = gymapi.TriangleMeshParams()
    params.nb_vertices, params.nb_triangles = vertices.shape[0], triangles.shape[0]
    gym.add_triangle_mesh(sim, vertices.flatten(order="C"), triangles.flatten(order="C"),
                          params)
    return tiles * TILE


def build(scene, num_envs):
    gym = gymapi.acquire_gym()
    params = gymapi.SimParams()
    params.dt, params.substeps = DT, 1
    params.up_axis = gymapi.UP_AXIS_Z
    params.gravity = gymapi.Vec3(0.0, 0.0, -9.81)
    params.physx.max_depenetration_velocity = 1.0
    sim = gym.create_sim(0, -1, gymapi.SIM_PHYSX, params)
    side = int(np.ceil(np.sqrt(num_envs)))
    if scene == "plane":
        plane = gymapi.PlaneParams()
        plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
        gym.add_ground(sim, plane)
        spacing, extent = 1.0, 0.0
    else:
        extent = rough_terrain(gym, sim, 4)
        spacing = 0.0  # legged_gym: envs at the origin, robots placed over the terrain
    options = gymapi.AssetOptions()
    options.default_dof_drive_mode = int(gymapi.DOF_MODE_EFFORT)
    options.collapse_fixed_joints = True
    options.replace_cylinder_with_capsule = True
    asset = gym.load_asset(sim, ASSETS, "quadruped.urdf", options)
    lower, upper = gymapi.Vec3(-spacing, -spacing, 0.0), gymapi.Vec3(spacing, spacing, spacing)
    for index in range(num_envs):
        env = gym.create_env(sim, lower, upper, side)
        pose = gymapi.Transform()
        row, col = divmod(index, side)
        x = 1.0 + (extent - 2.0) * (row + 0.5) / side if extent else 0.0
        y = 1.0 + (extent - 2.0) * (col + 0.5) / side if extent else 0.0
        pose.p = gymapi.Vec3(x, y, 0.5 if extent else 0.38)
        gym.create_actor(env, asset, pose, "robot", index, 1)
    assert gym.prepare_sim(sim)
    return gym, sim


class Stepper:
    """legged_gym's step: PD torques from random actions, DECIMATION simulates."""

    def __init__(self, gym, sim, num_envs):
        self.gym, self.sim = gym, sim
        self.dofs = gymtorch.wrap_tensor(gym.acquire_dof_state_tensor(sim)).view(num_envs, -1, 2)
        gym.acquire_actor_root_state_tensor(sim)
        gym.acquire_net_contact_force_tensor(sim)
        gym.refresh_dof_state_tensor(sim)
        self.default = self.dofs[..., 0].clone()
        self.generator = torch.Generator().manual_seed(0)
        self.torques = torch.zeros_like(self.default)

    def step(self):
        gym, sim = self.gym, self.sim
        actions = torch.rand(self.default.shape, generator=self.generator) * 2.0 - 1.0
        for _ in range(DECIMATION):
            target = actions * SCALE + self.default
            self.torques[:] = KP * (target - self.dofs[..., 0]) - KD * self.dofs[..., 1]
            gym.set_dof_actuation_force_tensor(sim, gymtorch.unwrap_tensor(self.torques))
            gym.simulate(sim)
            gym.fetch_results(sim, True)
            gym.refresh_dof_state_tensor(sim)
        gym.refresh_actor_root_state_tensor(sim)
        gym.refresh_net_contact_force_tensor(sim)


def main(scene, num_envs, steps, rounds, threads):
    gym, sim = build(scene, num_envs)
    stepper = Stepper(gym, sim, num_envs)
    for count in threads:  # warm-up: each pool started, the contacts settled
        os.environ["UNISIM_FAKE_THREADS"] = str(count)
        stepper.step()
    print(json.dumps({"isaacgym": os.path.dirname(os.path.abspath(gymapi.__file__))}),
          flush=True)
    for k in range(rounds):
        seconds = {}
        for count in (threads if k % 2 == 0 else threads[::-1]):
            os.environ["UNISIM_FAKE_THREADS"] = str(count)
            stepper.step()  # the pool's threads woken
            started = time.perf_counter()
            for _ in range(steps):
                stepper.step()
            seconds[str(count)] = time.perf_counter() - started
        print(json.dumps(seconds), flush=True)
    gym.destroy_sim(sim)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
         [int(t) for t in sys.argv[5:]])
