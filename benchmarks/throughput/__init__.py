"""env-steps/s of unisim against in-process MuJoCo, gymnasium and EnvPool: the suite."""
