"""The task bridge's engine: a user's IsaacGym task served in the worker (``engine``)."""

import os

# The task's torch ops and the SDK's simulate take turns on the worker's cores. OpenMP's
# threads left spinning after each op (libgomp's default) keep cores from the simulator's
# threads (the SDK fake's, PhysX's on the CPU) just as these start: CI ant, N = 1024, CPU
# pipeline, 16 cores, 181 ms a step, 163 ms with OMP_WAIT_POLICY=PASSIVE (docs/benchmarks.md,
# "The task bridge"). Set before torch is imported (libgomp reads it when loaded); a
# user's own setting stays.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# The SDK's own interpreter (its conda env), read by the host: unisim.interpreter.HOOKS
INTERPRETER = "isaacgym"


def capabilities(options, num_envs):
    """A user's task is one simulation, whatever its pipeline: one worker. It steps on
    threads of its own over every core (PhysX's worker threads, the fake's pool:
    ``isaacgym_fake/isaacgym/_threads.py``), so the host keeps no core of its own and
    sleeps until the reply wakes it (``doorbell.Forecast``)."""
    return {"engine": "an IsaacGym task", "threaded": True, "per_device": True}
