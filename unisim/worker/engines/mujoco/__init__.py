"""The MuJoCo engine: ``engine.ENGINE``, N states of one model on CPU MuJoCo."""
