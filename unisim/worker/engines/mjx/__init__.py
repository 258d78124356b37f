"""The MJX engine: ``engine.ENGINE``, MuJoCo's JAX port on the GPU."""
