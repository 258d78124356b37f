"""The IsaacGym engine: ``engine.ENGINE`` adapts the SDK (imported lazily, in ``sim``)."""

from .options import Options

# The SDK's own interpreter (its conda env), read by the host: unisim.interpreter.HOOKS
INTERPRETER = "isaacgym"


def capabilities(options, num_envs):
    """The CPU pipeline steps on one thread. The GPU pipeline (the SDK's default) is one
    simulation per GPU; so is a sim with a viewer on either pipeline (one window, not one
    per worker)."""
    checked = Options(options, num_envs)
    return {"engine": "IsaacGym", "threaded": False,
            "per_device": checked.pipeline == "gpu" or checked.viewer is True}
