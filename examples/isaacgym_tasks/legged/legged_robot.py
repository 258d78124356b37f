"""A legged robot on flat ground, written as legged_gym writes ``LeggedRobot`` (our own code).

URDF asset with effort drives; PD targets from the actions, torques clipped by the DOF
effort limits the URDF gives; rewards are sums of scaled terms (``_reward_<name>`` times
its scale and dt); an episode ends on base contact or at the time limit; robots are pushed
at intervals; velocity commands are resampled, with no curriculum. Python 3.8.

As legged_gym's forks do, and the SDK allows: every env is reset in ``__init__`` and again
by the runner's ``reset()`` before the first simulate; and the push, after the step's
resets, sets the root state of the envs whose episode length is a multiple of the push
interval with a second indexed call (the envs just reset are among them, so this last call
covers the reset's rows, which the GPU pipeline would otherwise drop), as unitree_rl_gym's
``LeggedRobot`` does.
"""

import math
import os

# isort: off
from isaacgym import gymapi, gymtorch  # the SDK refuses to load after torch
from isaacgym.torch_utils import quat_rotate_inverse, to_torch, torch_rand_float
import torch
# isort: on

from .base_task import BaseTask


class LeggedRobot(BaseTask):
    def __init__(self, cfg, sim_params, physics_engine, sim_device, headless):
        self.cfg = cfg
        self.dt = cfg.control.decimation * sim_params.dt
        self.max_episode_length = math.ceil(cfg.env.episode_length_s / self.dt)
        self.push_interval = math.ceil(cfg.domain_rand.push_interval_s / self.dt)
        self.resample_interval = math.ceil(cfg.commands.resampling_time / self.dt)
        super().__init__(cfg, sim_params, physics_engine, sim_device, headless)
        self._init_buffers()
        self._prepare_reward_function()
        self.reset_idx(torch.arange(self.num_envs, device=self.device))

    # -- building ----------------------------------------------------------------------

    def create_sim(self):
        self.sim = self.gym.create_sim(self.sim_device_id, self.graphics_device_id,
                                       self.physics_engine, self.sim_params)
        plane = gymapi.PlaneParams()
        plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
        plane.static_friction = self.cfg.terrain.static_friction
        plane.dynamic_friction = self.cfg.terrain.dynamic_friction
        plane.restitution = self.cfg.terrain.restitution
        self.gym.add_ground(self.sim, plane)
        self._create_envs()

    def _create_envs(self):
        asset_cfg = self.cfg.asset
        options = gymapi.AssetOptions()
        options.default_dof_drive_mode = asset_cfg.default_dof_drive_mode
        options.collapse_fixed_joints = asset_cfg.collapse_fixed_joints
        options.replace_cylinder_with_capsule = asset_cfg.replace_cylinder_with_capsule
        options.angular_damping = asset_cfg.angular_damping
        options.linear_damping = asset_cfg.linear_damping
        options.armature = asset_cfg.armature
        options.thickness = asset_cfg.thickness
        folder, name = os.path.split(asset_cfg.file)
        asset = self.gym.load_asset(self.sim, folder, name, options)
        self.num_dof = self.gym.get_asset_dof_count(asset)
        self.dof_names = self.gym.get_asset_dof_names(asset)
        body_names = self.gym.get_asset_rigid_body_names(asset)
        feet = [n for n in body_names if asset_cfg.foot_name in n]
        terminating = [n for n in body_names
                       if any(part in n for part in asset_cfg.terminate_after_contacts_on)]
        dof_props = self.gym.get_asset_dof_properties(asset)
        self.torque_limits = to_torch([float(e) for e in dof_props["effort"]], device=self.device)
        dof_props["driveMode"][:] = gymapi.DOF_MODE_EFFORT
        dof_props["stiffness"][:] = 0.0
        dof_props["damping"][:] = 0.0
        pose = gymapi.Transform()
        pose.p = gymapi.Vec3(*self.cfg.init_state.pos)
        pose.r = gymapi.Quat(*self.cfg.init_state.rot)
        spacing = self.cfg.env.env_spacing
        lower, upper = gymapi.Vec3(-spacing, -spacing, 0.0), gymapi.Vec3(spacing, spacing, 0.0)
        per_row = int(math.sqrt(self.num_envs))
        self.envs, self.actors = [], []
        for i in range(self.num_envs):
            env = self.gym.create_env(self.sim, lower, upper, per_row)
            actor = self.gym.create_actor(env, asset, pose, "robot", i,
                                          asset_cfg.self_collisions, 0)
            self.gym.set_actor_dof_properties(env, actor, dof_props)
            self.envs.append(env)
            self.actors.append(actor)
        find = self.gym.find_actor_rigid_body_handle
        self.feet_indices = torch.tensor([find(self.envs[0], self.actors[0], n) for n in feet],
                                         dtype=torch.long, device=self.device)
        self.termination_indices = torch.tensor(
            [find(self.envs[0], self.actors[0], n) for n in terminating], dtype=torch.long,
            device=self.device)

    def _init_buffers(self):
        n = self.num_envs
        root = self.gym.acquire_actor_root_state_tensor(self.sim)
        dofs = self.gym.acquire_dof_state_tensor(self.sim)
        contacts = self.gym.acquire_net_contact_force_tensor(self.sim)
        self.gym.refresh_actor_root_state_tensor(self.sim)
        self.gym.refresh_dof_state_tensor(self.sim)
        self.gym.refresh_net_contact_force_tensor(self.sim)
        self.root_states = gymtorch.wrap_tensor(root)
        self.dof_state = gymtorch.wrap_tensor(dofs)
        self.dof_pos = self.dof_state.view(n, self.num_dof, 2)[..., 0]
        self.dof_vel = self.dof_state.view(n, self.num_dof, 2)[..., 1]
        self.contact_forces = gymtorch.wrap_tensor(contacts).view(n, -1, 3)
        self.base_init_state = to_torch(self.cfg.init_state.pos + self.cfg.init_state.rot
                                        + [0.0] * 6, device=self.device)
        angles = self.cfg.init_state.default_joint_angles
        self.default_dof_pos = to_torch(
            [next(v for k, v in angles.items() if k in name) for name in self.dof_names],
            device=self.device).unsqueeze(0)
        self.gravity_vec = to_torch([0.0, 0.0, -1.0], device=self.device).repeat(n, 1)
        self.actions = torch.zeros(n, self.num_actions, device=self.device)
        self.last_actions = torch.zeros_like(self.actions)
        self.torques = torch.zeros(n, self.num_dof, device=self.device)
        self.commands = torch.zeros(n, 3, device=self.device)
        self.common_step_counter = 0
        self._update_base_state()

    def _prepare_reward_function(self):
        scales = self.cfg.rewards.scales
        self.reward_scales = {name: getattr(scales, name) * self.dt for name in dir(scales)
                              if not name.startswith("_") and getattr(scales, name) != 0}
        self.episode_sums = {name: torch.zeros(self.num_envs, device=self.device)
                             for name in self.reward_scales}

    # -- stepping ----------------------------------------------------------------------

    def step(self, actions):
        clip = self.cfg.normalization.clip_actions
        self.actions = torch.clip(actions, -clip, clip).to(self.device)
        for _ in range(self.cfg.control.decimation):
            self.torques = self._compute_torques(self.actions)
            self.gym.set_dof_actuation_force_tensor(self.sim, gymtorch.unwrap_tensor(self.torques))
            self.gym.simulate(self.sim)
            if self.device == "cpu":
                self.gym.fetch_results(self.sim, True)
            self.gym.refresh_dof_state_tensor(self.sim)
        self.post_physics_step()
        clip = self.cfg.normalization.clip_observations
        self.obs_buf = torch.clip(self.obs_buf, -clip, clip)
        if self.privileged_obs_buf is not None:
            self.privileged_obs_buf = torch.clip(self.privileged_obs_buf, -clip, clip)
        return self.obs_buf, self.privileged_obs_buf, self.rew_buf, self.reset_buf, self.extras

    def _compute_torques(self, actions):
        control = self.cfg.control
        targets = actions * control.action_scale + self.default_dof_pos
        torques = control.stiffness * (targets - self.dof_pos) - control.damping * self.dof_vel
        return torch.clip(torques, -self.torque_limits, self.torque_limits).contiguous()

    def post_physics_step(self):
        self.gym.refresh_actor_root_state_tensor(self.sim)
        self.gym.refresh_net_contact_force_tensor(self.sim)
        self.episode_length_buf += 1
        self.common_step_counter += 1
        self._update_base_state()
        self._post_physics_step_callback()
        self.check_termination()
        self.compute_reward()
        env_ids = self.reset_buf.nonzero(as_tuple=False).flatten()
        self.reset_idx(env_ids)
        if self.cfg.domain_rand.push_robots:
            self._push_robots()
        self.compute_observations()
        self.last_actions[:] = self.actions

    def _update_base_state(self):
        self.base_quat = self.root_states[:, 3:7]
        self.base_lin_vel = quat_rotate_inverse(self.base_quat, self.root_states[:, 7:10])
        self.base_ang_vel = quat_rotate_inverse(self.base_quat, self.root_states[:, 10:13])
        self.projected_gravity = quat_rotate_inverse(self.base_quat, self.gravity_vec)

    def _post_physics_step_callback(self):
        due = (self.episode_length_buf % self.resample_interval == 0).nonzero(as_tuple=False)
        self._resample_commands(due.flatten())

    def _resample_commands(self, env_ids):
        ranges, n = self.cfg.commands, len(env_ids)
        for column, (low, high) in enumerate((ranges.lin_vel_x, ranges.lin_vel_y,
                                              ranges.ang_vel_yaw)):
            self.commands[env_ids, column] = torch_rand_float(low, high, (n, 1),
                                                              device=self.device).squeeze(1)

    def _push_robots(self):
        """A random base velocity for the envs whose episode length is a multiple of the push
        interval (those reset in this step included), by the indexed root setter."""
        env_ids = (self.episode_length_buf % self.push_interval == 0).nonzero(
            as_tuple=False).flatten()
        if len(env_ids) == 0:
            return
        most = self.cfg.domain_rand.max_push_vel_xy
        self.root_states[env_ids, 7:9] = torch_rand_float(-most, most, (len(env_ids), 2),
                                                          device=self.device)
        indices = env_ids.to(dtype=torch.int32)
        self.gym.set_actor_root_state_tensor_indexed(
            self.sim, gymtorch.unwrap_tensor(self.root_states), gymtorch.unwrap_tensor(indices),
            len(indices))

    def check_termination(self):
        forces = self.contact_forces[:, self.termination_indices, :]
        self.reset_buf = torch.any(torch.norm(forces, dim=-1) > 1.0, dim=1)
        self.time_out_buf = self.episode_length_buf > self.max_episode_length
        self.reset_buf = self.reset_buf | self.time_out_buf

    def compute_reward(self):
        self.rew_buf[:] = 0.0
        for name, scale in self.reward_scales.items():
            term = getattr(self, "_reward_" + name)() * scale
            self.rew_buf += term
            self.episode_sums[name] += term
        if self.cfg.rewards.only_positive_rewards:
            self.rew_buf[:] = torch.clip(self.rew_buf, min=0.0)

    def compute_observations(self):
        norm = self.cfg.normalization
        self.obs_buf = torch.cat([
            self.base_lin_vel * norm.lin_vel, self.base_ang_vel * norm.ang_vel,
            self.projected_gravity, self.commands * norm.lin_vel,
            self.dof_pos - self.default_dof_pos, self.dof_vel * norm.dof_vel, self.actions],
            dim=-1)
        feet_down = (torch.norm(self.contact_forces[:, self.feet_indices, :], dim=-1) > 1.0)
        self.privileged_obs_buf = torch.cat([self.obs_buf, self.root_states[:, 2:3],
                                             feet_down.float()], dim=-1)

    def reset_idx(self, env_ids):
        if len(env_ids) == 0:
            return
        n = len(env_ids)
        self.dof_pos[env_ids] = self.default_dof_pos * torch_rand_float(
            0.8, 1.2, (n, self.num_dof), device=self.device)
        self.dof_vel[env_ids] = 0.0
        indices = env_ids.to(dtype=torch.int32)
        self.gym.set_dof_state_tensor_indexed(self.sim, gymtorch.unwrap_tensor(self.dof_state),
                                              gymtorch.unwrap_tensor(indices), n)
        self.root_states[env_ids] = self.base_init_state
        self.root_states[env_ids, 7:13] = torch_rand_float(-0.2, 0.2, (n, 6), device=self.device)
        self.gym.set_actor_root_state_tensor_indexed(
            self.sim, gymtorch.unwrap_tensor(self.root_states), gymtorch.unwrap_tensor(indices), n)
        self._resample_commands(env_ids)
        self.last_actions[env_ids] = 0.0
        self.episode_length_buf[env_ids] = 0
        self.reset_buf[env_ids] = True
        seconds = self.max_episode_length * self.dt
        self.extras["episode"] = {"rew_" + name: torch.mean(sums[env_ids]) / seconds
                                  for name, sums in self.episode_sums.items()}
        for sums in self.episode_sums.values():
            sums[env_ids] = 0.0
        self.extras["time_outs"] = self.time_out_buf

    # -- reward terms ------------------------------------------------------------------

    def _reward_tracking_lin_vel(self):
        error = torch.sum(torch.square(self.commands[:, :2] - self.base_lin_vel[:, :2]), dim=1)
        return torch.exp(-error / self.cfg.rewards.tracking_sigma)

    def _reward_tracking_ang_vel(self):
        error = torch.square(self.commands[:, 2] - self.base_ang_vel[:, 2])
        return torch.exp(-error / self.cfg.rewards.tracking_sigma)

    def _reward_lin_vel_z(self):
        return torch.square(self.base_lin_vel[:, 2])

    def _reward_ang_vel_xy(self):
        return torch.sum(torch.square(self.base_ang_vel[:, :2]), dim=1)

    def _reward_orientation(self):
        return torch.sum(torch.square(self.projected_gravity[:, :2]), dim=1)

    def _reward_torques(self):
        return torch.sum(torch.square(self.torques), dim=1)

    def _reward_action_rate(self):
        return torch.sum(torch.square(self.last_actions - self.actions), dim=1)

    def _reward_termination(self):
        return (self.reset_buf & ~self.time_out_buf).float()
