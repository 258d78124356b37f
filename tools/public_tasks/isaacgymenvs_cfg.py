"""Print an IsaacGymEnvs task's config section as JSON, resolved as its train.py resolves it.

    python3.8 isaacgymenvs_cfg.py <IsaacGymEnvs checkout> <task, e.g. Ant>

Run on the worker's interpreter (it has Hydra, which IsaacGymEnvs needs): Hydra composes
``isaacgymenvs/cfg/config.yaml`` with ``task=<task>`` on the CPU pipeline, with the
resolvers ``import isaacgymenvs`` registers, as ``python -m unisim task train --style
vec_task --cfg`` takes it. Python 3.8 code.
"""

import json
import os
import sys


def main():
    checkout, task = sys.argv[1], sys.argv[2]
    sys.path.insert(0, checkout)
    import isaacgymenvs  # noqa: F401 - registers the config's resolvers (eq, contains, ...)
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    folder = os.path.join(os.path.abspath(checkout), "isaacgymenvs", "cfg")
    with initialize_config_dir(config_dir=folder, version_base="1.1"):
        cfg = compose(config_name="config", overrides=[
            "task=" + task, "pipeline=cpu", "sim_device=cpu", "rl_device=cpu"])
    print(json.dumps(OmegaConf.to_container(cfg.task, resolve=True)))


if __name__ == "__main__":
    main()
