"""PPO settings per built-in task, as rsl-rl-lib 5.x ``OnPolicyRunner`` configs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Recipe:
    """How to train one task on a 2-core machine in minutes."""

    num_envs: int
    iterations: int
    steps_per_env: int  # rollout length per iteration
    hidden_dims: tuple[int, ...]
    entropy_coef: float = 0.005
    learning_rate: float = 1e-3


RECIPES = {
    "cartpole": Recipe(num_envs=256, iterations=100, steps_per_env=32, hidden_dims=(32, 32)),
    "quadruped": Recipe(num_envs=256, iterations=250, steps_per_env=24, hidden_dims=(64, 64)),
}
DEFAULT_RECIPE = RECIPES["cartpole"]


def runner_config(recipe: Recipe, iterations: int, logger: dict[str, Any]) -> dict[str, Any]:
    """The ``train_cfg`` dict of ``rsl_rl.runners.OnPolicyRunner``."""
    model = {"class_name": "MLPModel", "hidden_dims": list(recipe.hidden_dims),
             "activation": "elu", "obs_normalization": True}
    return {
        "num_steps_per_env": recipe.steps_per_env,
        "save_interval": iterations,  # checkpoints at the first and the last iteration
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "algorithm": {
            "class_name": "PPO", "num_learning_epochs": 5, "num_mini_batches": 4,
            "learning_rate": recipe.learning_rate, "schedule": "adaptive", "desired_kl": 0.01,
            "gamma": 0.99, "lam": 0.95, "entropy_coef": recipe.entropy_coef,
            "clip_param": 0.2, "value_loss_coef": 1.0, "max_grad_norm": 1.0,
            "use_clipped_value_loss": True,
        },
        "actor": {**model, "distribution_cfg": {"class_name": "GaussianDistribution",
                                                "init_std": 1.0}},
        "critic": model,
        "logger": logger,
    }
