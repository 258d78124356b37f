"""A minimal gymnasium ``MujocoEnv`` over any MJCF, for the gymnasium vector-env baselines.

It does what the unisim worker does per env and no more: write the action, step
``frame_skip`` times, return qpos and qvel. No reward shaping, no termination.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
from gymnasium.envs.mujoco.mujoco_env import MujocoEnv
from gymnasium.spaces import Box


class MjcfEnv(MujocoEnv):  # type: ignore[misc]  # gymnasium is untyped here
    def __init__(self, model_path: str, keyframe: str | None = None, frame_skip: int = 5) -> None:
        timestep = mujoco.MjModel.from_xml_path(model_path).opt.timestep
        # MujocoEnv insists that render_fps matches the control rate.
        self.metadata = {"render_modes": ["human", "rgb_array", "depth_array"],
                         "render_fps": round(1.0 / (timestep * frame_skip))}
        super().__init__(model_path, frame_skip, observation_space=None)
        size = self.model.nq + self.model.nv
        self.observation_space = Box(-np.inf, np.inf, (size,), np.float64)
        self._key = -1 if keyframe is None else mujoco.mj_name2id(
            self.model, mujoco.mjtObj.mjOBJ_KEY, keyframe)

    def _obs(self) -> np.ndarray:
        return np.concatenate([self.data.qpos, self.data.qvel])

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.do_simulation(action, self.frame_skip)
        return self._obs(), 0.0, False, False, {}

    def reset_model(self) -> np.ndarray:
        if self._key >= 0:
            mujoco.mj_resetDataKeyframe(self.model, self.data, self._key)
            mujoco.mj_forward(self.model, self.data)
        return self._obs()
