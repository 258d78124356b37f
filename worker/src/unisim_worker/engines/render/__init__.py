"""The render pool's engine: ``engine.ENGINE`` draws rows of states, simulates nothing."""

from .. import mujoco


def capabilities(options, num_envs):
    """MuJoCo's: it draws with MuJoCo."""
    return mujoco.capabilities(options, num_envs)
