"""The task bridge: an IsaacGym task, unmodified, in a Python 3.8 worker; trained on the host.

``BridgedTask`` (a unisim ``Task``) runs it; ``rsl_rl.RslRlTaskEnv``,
``unisim.integrations.gymnasium.GymnasiumVectorEnv``, ``preview4.IsaacGymPreview4Env`` (skrl)
and ``rl_games.RlGamesVecEnv`` hand it to learners. docs/bring-your-isaacgym-task.md shows
the commands.
"""

from .env import BridgedTask

__all__ = ["BridgedTask"]
