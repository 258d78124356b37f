"""A base task in the style of legged_gym's ``BaseTask``: the sim, the buffers, reset/step.

Our own code with legged_gym's constructor and contract: ``step(actions)`` returns
``(obs, privileged_obs, rew, reset, extras)`` and restarts the episodes it ends; ``reset()``
restarts every episode and returns ``(obs, privileged_obs)``. Python 3.8.
"""

# isort: off
from isaacgym import gymapi  # the SDK refuses to load after torch
import torch
# isort: on


class BaseTask:
    def __init__(self, cfg, sim_params, physics_engine, sim_device, headless):
        self.gym = gymapi.acquire_gym()
        self.sim_params = sim_params
        self.physics_engine = physics_engine
        self.sim_device = sim_device
        self.device = sim_device if sim_params.use_gpu_pipeline else "cpu"
        self.sim_device_id = int(sim_device.split(":")[1]) if ":" in sim_device else 0
        self.graphics_device_id = -1 if headless else self.sim_device_id
        self.headless = headless
        self.num_envs = cfg.env.num_envs
        self.num_obs = cfg.env.num_observations
        self.num_privileged_obs = cfg.env.num_privileged_obs
        self.num_actions = cfg.env.num_actions
        n = self.num_envs
        self.obs_buf = torch.zeros(n, self.num_obs, device=self.device)
        self.rew_buf = torch.zeros(n, device=self.device)
        self.reset_buf = torch.ones(n, device=self.device, dtype=torch.long)
        self.episode_length_buf = torch.zeros(n, device=self.device, dtype=torch.long)
        self.time_out_buf = torch.zeros(n, device=self.device, dtype=torch.bool)
        self.privileged_obs_buf = None if self.num_privileged_obs is None else \
            torch.zeros(n, self.num_privileged_obs, device=self.device)
        self.extras = {}
        self.create_sim()
        self.gym.prepare_sim(self.sim)
        self.viewer = None

    def get_observations(self):
        return self.obs_buf

    def get_privileged_observations(self):
        return self.privileged_obs_buf

    def reset_idx(self, env_ids):
        raise NotImplementedError

    def reset(self):
        """Restart every episode; one step of zero actions gives the first observations."""
        self.reset_idx(torch.arange(self.num_envs, device=self.device))
        obs, privileged, _, _, _ = self.step(
            torch.zeros(self.num_envs, self.num_actions, device=self.device))
        return obs, privileged

    def step(self, actions):
        raise NotImplementedError
