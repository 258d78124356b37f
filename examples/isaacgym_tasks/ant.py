"""An ant that learns to run along +x: unisim's CI task in the style of IsaacGymEnvs' Ant.

Our own task on our own base (``vec_task``): an MJCF asset whose eight hinges have no drive
(``DOF_MODE_NONE``), moved by actuation forces (``set_dof_actuation_force_tensor``), as
IsaacGymEnvs drives its Ant and Humanoid. Rewards: forward speed, staying up, minus action
and energy costs; an episode ends when the torso drops or at the time limit. Its config is
``cfg/ant.json`` (33 observations, 35 states for an asymmetric critic). Python 3.8.
"""

import os

# isort: off
from isaacgym import gymapi, gymtorch  # the SDK refuses to load after torch
from isaacgym.torch_utils import quat_rotate, to_torch
import torch
# isort: on

from .vec_task import VecTask

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")
NUM_DOF = 8


class Ant(VecTask):
    def __init__(self, cfg, rl_device, sim_device, graphics_device_id, headless,
                 virtual_screen_capture=False, force_render=False):
        env = cfg["env"]
        self.power = float(env["powerScale"]) * float(env["motorEffort"])
        self.alive_reward = float(env["aliveReward"])
        self.actions_cost = float(env["actionsCost"])
        self.energy_cost = float(env["energyCost"])
        self.death_cost = float(env["deathCost"])
        self.termination_height = float(env["terminationHeight"])
        self.spacing = float(env["envSpacing"])
        super().__init__(cfg, rl_device, sim_device, graphics_device_id, headless,
                         virtual_screen_capture, force_render)
        self.gym.refresh_actor_root_state_tensor(self.sim)
        self.gym.refresh_dof_state_tensor(self.sim)
        root, dofs = self.root_states, self.dof_state  # acquired in create_sim
        self.initial_root_states = root.clone()
        self.dof_pos = dofs.view(self.num_envs, NUM_DOF, 2)[..., 0]
        self.dof_vel = dofs.view(self.num_envs, NUM_DOF, 2)[..., 1]
        self.initial_dof_pos = torch.clamp(torch.zeros_like(self.dof_pos), self.dof_lower,
                                           self.dof_upper)
        self.actions = torch.zeros((self.num_envs, NUM_DOF), device=self.device)
        self.up = to_torch([0.0, 0.0, 1.0], device=self.device).repeat(self.num_envs, 1)
        self.forward = to_torch([1.0, 0.0, 0.0], device=self.device).repeat(self.num_envs, 1)
        self.extras["episode"] = {"return": 0.0, "length": 0.0}
        self.episode_sums = torch.zeros(self.num_envs, device=self.device)

    def create_sim(self):
        self.sim = self.gym.create_sim(self.device_id, self.graphics_device_id,
                                       gymapi.SIM_PHYSX, self.sim_params)
        plane = gymapi.PlaneParams()
        plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
        self.gym.add_ground(self.sim, plane)
        options = gymapi.AssetOptions()
        options.default_dof_drive_mode = gymapi.DOF_MODE_NONE
        options.angular_damping = 0.0
        asset = self.gym.load_asset(self.sim, ASSETS, "ant.xml", options)
        props = self.gym.get_asset_dof_properties(asset)
        self.dof_lower = to_torch(list(props["lower"]), device=self.device)
        self.dof_upper = to_torch(list(props["upper"]), device=self.device)
        pose = gymapi.Transform()
        pose.p = gymapi.Vec3(0.0, 0.0, 0.6)
        lower = gymapi.Vec3(-self.spacing, -self.spacing, 0.0)
        upper = gymapi.Vec3(self.spacing, self.spacing, self.spacing)
        per_row = int(self.num_envs ** 0.5)
        self.envs = []
        for i in range(self.num_envs):
            env = self.gym.create_env(self.sim, lower, upper, per_row)
            self.gym.create_actor(env, asset, pose, "ant", i, 1, 0)
            self.envs.append(env)
        # acquired before VecTask calls prepare_sim, as IsaacGymEnvs' FrankaCubeStack does
        # (in create_sim): the SDK fills these same tensors once the sim is prepared
        self.root_states = gymtorch.wrap_tensor(self.gym.acquire_actor_root_state_tensor(self.sim))
        self.dof_state = gymtorch.wrap_tensor(self.gym.acquire_dof_state_tensor(self.sim))

    def pre_physics_step(self, actions):
        self.actions = actions.clone()
        forces = (self.actions * self.power).contiguous()
        self.gym.set_dof_actuation_force_tensor(self.sim, gymtorch.unwrap_tensor(forces))

    def post_physics_step(self):
        self.progress_buf += 1
        env_ids = self.reset_buf.nonzero(as_tuple=False).flatten()
        if len(env_ids) > 0:
            self.reset_idx(env_ids)
        self.compute_observations()
        self.compute_reward()

    def compute_observations(self):
        self.gym.refresh_actor_root_state_tensor(self.sim)
        self.gym.refresh_dof_state_tensor(self.sim)
        rot = self.root_states[:, 3:7]
        up = quat_rotate(rot, self.up)[:, 2:3]
        heading = quat_rotate(rot, self.forward)[:, 0:1]
        scaled = (2.0 * self.dof_pos - self.dof_upper - self.dof_lower) / \
            (self.dof_upper - self.dof_lower)
        self.obs_buf[:] = torch.cat([
            self.root_states[:, 2:3], up, heading, self.root_states[:, 7:10],
            0.25 * self.root_states[:, 10:13], scaled, 0.2 * self.dof_vel, self.actions], dim=-1)
        self.states_buf[:] = torch.cat([self.obs_buf, self.root_states[:, 0:2]], dim=-1)

    def compute_reward(self):
        height = self.root_states[:, 2]
        reward = self.root_states[:, 7] + self.alive_reward \
            - self.actions_cost * torch.sum(self.actions ** 2, dim=-1) \
            - self.energy_cost * torch.sum(torch.abs(self.actions * self.dof_vel), dim=-1)
        fallen = height < self.termination_height
        self.rew_buf[:] = torch.where(fallen, torch.full_like(reward, self.death_cost), reward)
        self.episode_sums += self.rew_buf
        ended = fallen | (self.progress_buf >= self.max_episode_length - 1)
        self.reset_buf[:] = ended.long()

    def reset_idx(self, env_ids):
        n = len(env_ids)
        noise = (torch.rand((n, NUM_DOF), device=self.device) - 0.5) * 0.4
        self.dof_pos[env_ids] = torch.clamp(self.initial_dof_pos[env_ids] + noise,
                                            self.dof_lower, self.dof_upper)
        self.dof_vel[env_ids] = (torch.rand((n, NUM_DOF), device=self.device) - 0.5) * 0.2
        self.root_states[env_ids] = self.initial_root_states[env_ids]
        indices = env_ids.to(dtype=torch.int32)
        self.gym.set_actor_root_state_tensor_indexed(
            self.sim, gymtorch.unwrap_tensor(self.root_states),
            gymtorch.unwrap_tensor(indices), n)
        self.gym.set_dof_state_tensor_indexed(self.sim, gymtorch.unwrap_tensor(self.dof_state),
                                              gymtorch.unwrap_tensor(indices), n)
        self.extras["episode"] = {
            "return": torch.mean(self.episode_sums[env_ids]),
            "length": torch.mean(self.progress_buf[env_ids].float())}
        self.episode_sums[env_ids] = 0.0
        self.progress_buf[env_ids] = 0
        self.reset_buf[env_ids] = 0
