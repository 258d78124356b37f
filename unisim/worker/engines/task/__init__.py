"""The task bridge's engine: a user's IsaacGym task served in the worker (``engine``)."""


def capabilities(options, num_envs):
    """A user's task is one simulation, whatever its pipeline: one worker."""
    return {"engine": "an IsaacGym task", "threaded": False, "per_device": True}
