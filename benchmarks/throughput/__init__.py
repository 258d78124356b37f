"""Steps per second through unisim against the same work in-process: the suite (MuJoCo,
gymnasium, EnvPool baselines) and the task bridge (an IsaacGym task, bridged or not)."""
