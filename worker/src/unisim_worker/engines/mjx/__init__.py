"""The MJX engine: ``engine.ENGINE``, MuJoCo's JAX port on the GPU."""


def capabilities(options, num_envs):
    return {"engine": "MJX", "threaded": True}
