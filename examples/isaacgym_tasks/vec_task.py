"""A small base class in the style of IsaacGymEnvs' ``VecTask``, for unisim's CI tasks.

Written for unisim (not IsaacGymEnvs' code): the same constructor and the same ``step`` /
``reset`` contract, so that the task bridge serves it as it serves an IsaacGymEnvs task.
A subclass builds its scene in ``create_sim`` and writes ``pre_physics_step`` (actions into
the sim) and ``post_physics_step`` (progress, resets, observations, rewards). Python 3.8.
"""

# isort: off
from isaacgym import gymapi  # the SDK refuses to load after torch
import torch
# isort: on


class VecTask:
    def __init__(self, config, rl_device, sim_device, graphics_device_id, headless,
                 virtual_screen_capture=False, force_render=False):
        self.cfg = config
        env = config["env"]
        self.num_envs = int(env["numEnvs"])
        self.num_obs = int(env["numObservations"])
        self.num_states = int(env.get("numStates", 0))
        self.num_actions = int(env["numActions"])
        self.max_episode_length = int(env["episodeLength"])
        self.control_freq_inv = int(env.get("controlFrequencyInv", 1))
        self.clip_obs = float(env.get("clipObservations", float("inf")))
        self.clip_actions = float(env.get("clipActions", 1.0))
        self.rl_device = rl_device
        self.device = sim_device if config["sim"].get("use_gpu_pipeline") else "cpu"
        self.headless = headless
        self.graphics_device_id = -1 if headless else graphics_device_id
        self.gym = gymapi.acquire_gym()
        self.sim_params = self._sim_params(config["sim"], sim_device)
        self.dt = self.sim_params.dt * self.control_freq_inv
        self.create_sim()
        self.gym.prepare_sim(self.sim)
        self.viewer = None
        n = self.num_envs
        self.obs_buf = torch.zeros((n, self.num_obs), device=self.device)
        self.states_buf = torch.zeros((n, self.num_states), device=self.device)
        self.rew_buf = torch.zeros(n, device=self.device)
        self.reset_buf = torch.ones(n, device=self.device, dtype=torch.long)
        self.timeout_buf = torch.zeros(n, device=self.device, dtype=torch.long)
        self.progress_buf = torch.zeros(n, device=self.device, dtype=torch.long)
        self.extras = {}
        self.obs_dict = {}

    def _sim_params(self, sim, sim_device):
        params = gymapi.SimParams()
        params.dt = float(sim["dt"])
        params.substeps = int(sim.get("substeps", 2))
        params.up_axis = gymapi.UP_AXIS_Z
        params.gravity = gymapi.Vec3(*sim.get("gravity", [0.0, 0.0, -9.81]))
        params.use_gpu_pipeline = bool(sim.get("use_gpu_pipeline", False))
        params.physx.use_gpu = sim_device.startswith("cuda")
        self.device_id = int(sim_device.split(":")[1]) if ":" in sim_device else 0
        return params

    def create_sim(self):
        raise NotImplementedError

    def pre_physics_step(self, actions):
        raise NotImplementedError

    def post_physics_step(self):
        raise NotImplementedError

    def step(self, actions):
        """Apply ``actions`` for ``control_freq_inv`` physics steps; the observation dict,
        rewards, resets and extras (``time_outs``), as IsaacGymEnvs' tasks return them."""
        actions = torch.clamp(actions, -self.clip_actions, self.clip_actions).to(self.device)
        self.pre_physics_step(actions)
        for _ in range(self.control_freq_inv):
            self.gym.simulate(self.sim)
        if self.device == "cpu":
            self.gym.fetch_results(self.sim, True)
        self.post_physics_step()
        self.timeout_buf = (self.progress_buf >= self.max_episode_length - 1).long()
        self.extras["time_outs"] = self.timeout_buf.to(self.rl_device)
        self.obs_dict["obs"] = torch.clamp(self.obs_buf, -self.clip_obs, self.clip_obs).to(
            self.rl_device)
        if self.num_states > 0:
            self.obs_dict["states"] = self.states_buf.to(self.rl_device)
        return self.obs_dict, self.rew_buf.to(self.rl_device), \
            self.reset_buf.to(self.rl_device), self.extras

    def reset(self):
        """The current observations; the envs flagged in ``reset_buf`` (all, at first) are
        reset by the next ``step``, as in IsaacGymEnvs."""
        self.obs_dict["obs"] = torch.clamp(self.obs_buf, -self.clip_obs, self.clip_obs).to(
            self.rl_device)
        if self.num_states > 0:
            self.obs_dict["states"] = self.states_buf.to(self.rl_device)
        return self.obs_dict
