"""The task bridge's engine: a user's IsaacGym task served in the worker (``engine``)."""

# The SDK's own interpreter (its conda env), read by the host: unisim.interpreter.HOOKS
INTERPRETER = "isaacgym"


def capabilities(options, num_envs):
    """A user's task is one simulation, whatever its pipeline: one worker."""
    return {"engine": "an IsaacGym task", "threaded": False, "per_device": True}
