"""The MuJoCo engine: ``engine.ENGINE``, N states of one model on CPU MuJoCo."""

import importlib.util
import os


def capabilities(options, num_envs):
    """MuJoCo's version, and whether it has ``mujoco.batch`` (its own thread pool), found
    without importing it."""
    spec = importlib.util.find_spec("mujoco")
    if spec is None or not spec.origin:
        return {"engine": "MuJoCo (not installed)", "threaded": False}
    folder = os.path.dirname(spec.origin)
    threaded = any(name == "batch" or name.startswith("batch.") for name in os.listdir(folder))
    try:
        from importlib.metadata import version

        release = version("mujoco")
    except Exception:  # a source checkout without metadata: the version is not essential
        release = "unknown"
    # Without the batch, every env's state is a row of one array, so workers can share rows
    # (claimed from a work queue, unisim_protocol.doorbell) once that array is in shared memory.
    return {"engine": "MuJoCo %s" % release, "version": release, "threaded": threaded,
            "shares_rows": not threaded}
