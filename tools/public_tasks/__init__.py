"""Public IsaacGym tasks (legged_gym, IsaacGymEnvs) through the task bridge."""
