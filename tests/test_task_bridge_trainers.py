"""skrl and rl_games, the IsaacGym field's other trainers, train the CI ant on the host.

Each is driven as its IsaacGym users drive it: skrl 1.4 as its IsaacGym examples do
(``docs/source/examples/isaacgym/torch_ant_ppo.py``: ``wrap_env``, a shared Gaussian and
value model, ``PPO``, ``SequentialTrainer``), rl_games as IsaacGymEnvs' ``train.py`` does
(``vecenv.register`` / ``env_configurations.register``, a config dict like
``cfg/train/AntPPO.yaml``, ``Runner.load/reset/run``). What they log to TensorBoard is read
back: the losses of every update, finite, and the mean return of the episodes that ended.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch

from unisim.task_bridge import BridgedTask
from unisim.task_bridge.preview4 import IsaacGymPreview4Env, StepResult

from .task_bridge_support import ANT, EXAMPLES, ant_cfg

pytest.importorskip("skrl", reason="skrl is in the trainers extra: pip install -e '.[dev]'")
pytest.importorskip("rl_games", reason="rl_games is in the trainers extra")

NUM_ENVS, HORIZON, UPDATES, EPISODE = 32, 16, 5, 40


class CountingEnv(IsaacGymPreview4Env):
    """Counts the steps the learner takes, to check them against what it says it took."""

    steps = 0

    def step(self, actions: torch.Tensor) -> StepResult:
        self.steps += 1
        return super().step(actions)


def scalars(folder: Path) -> dict[str, list[float]]:
    """Every scalar series in the TensorBoard event files under ``folder``, by tag, in the
    order written (read raw: TensorBoard's accumulator drops points whose step goes back,
    and rl_games logs some series by frame and others by epoch)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    series: dict[str, list[float]] = {}
    for events in sorted(folder.rglob("events.out.tfevents.*")):
        for event in EventFileLoader(str(events)).Load():
            for value in event.summary.value:
                number = value.tensor.float_val[0] if value.HasField("tensor") \
                    else value.simple_value
                series.setdefault(value.tag, []).append(float(number))
    return series


def finite(values: list[float], count: int | None = None) -> list[float]:
    """``values``, checked to be finite and, if ``count`` is given, that many."""
    assert values, "nothing logged"
    assert count is None or len(values) == count, values
    assert all(math.isfinite(v) for v in values), values
    return values


def test_skrl_ppo_trains_the_bridged_ant(isaacgym_fake_python: str, tmp_path: Path) -> None:
    from skrl.agents.torch.ppo import PPO, PPO_DEFAULT_CONFIG
    from skrl.envs.wrappers.torch import wrap_env
    from skrl.memories.torch import RandomMemory
    from skrl.models.torch import DeterministicMixin, GaussianMixin, Model
    from skrl.resources.preprocessors.torch import RunningStandardScaler
    from skrl.trainers.torch import SequentialTrainer
    from skrl.utils import set_seed

    class Shared(GaussianMixin, DeterministicMixin, Model):  # type: ignore[misc]
        """skrl's IsaacGym Ant model, smaller: one trunk, a Gaussian head, a value head."""

        def __init__(self, observation_space: Any, action_space: Any, device: Any) -> None:
            Model.__init__(self, observation_space, action_space, device)
            GaussianMixin.__init__(self, False, True, -20, 2, "sum")
            DeterministicMixin.__init__(self, False)
            self.net = torch.nn.Sequential(torch.nn.Linear(self.num_observations, 64),
                                           torch.nn.ELU(), torch.nn.Linear(64, 64),
                                           torch.nn.ELU())
            self.mean_layer = torch.nn.Linear(64, self.num_actions)
            self.log_std_parameter = torch.nn.Parameter(torch.zeros(self.num_actions))
            self.value_layer = torch.nn.Linear(64, 1)

        def act(self, inputs: dict[str, Any], role: str) -> Any:
            mixin = GaussianMixin if role == "policy" else DeterministicMixin
            return mixin.act(self, inputs, role)

        def compute(self, inputs: dict[str, Any], role: str) -> Any:
            trunk = self.net(inputs["states"])
            if role == "policy":
                return self.mean_layer(trunk), self.log_std_parameter, {}
            return self.value_layer(trunk), {}

    set_seed(0)
    torch.set_num_threads(1)
    with BridgedTask(ANT, NUM_ENVS, style="vec_task", cfg=ant_cfg(episode_length=EPISODE),
                     paths=[EXAMPLES], python=isaacgym_fake_python) as task:
        bridged = CountingEnv(task)
        env = wrap_env(bridged, wrapper="isaacgym-preview4")
        assert (env.num_envs, env.observation_space.shape, env.action_space.shape) == \
            (NUM_ENVS, (33,), (8,))
        cfg = PPO_DEFAULT_CONFIG.copy()
        cfg.update({"rollouts": HORIZON, "learning_epochs": 4, "mini_batches": 2,
                    "learning_rate": 1e-3, "random_timesteps": 0, "learning_starts": 0,
                    "rewards_shaper": None, "state_preprocessor": RunningStandardScaler,
                    "state_preprocessor_kwargs": {"size": env.observation_space,
                                                  "device": env.device},
                    "value_preprocessor": RunningStandardScaler,
                    "value_preprocessor_kwargs": {"size": 1, "device": env.device}})
        cfg["experiment"] = {**cfg["experiment"], "directory": str(tmp_path),
                             "experiment_name": "ant", "write_interval": HORIZON,
                             "checkpoint_interval": 0}
        model = Shared(env.observation_space, env.action_space, env.device)
        agent = PPO(models={"policy": model, "value": model},
                    memory=RandomMemory(memory_size=HORIZON, num_envs=NUM_ENVS,
                                        device=env.device),
                    cfg=cfg, observation_space=env.observation_space,
                    action_space=env.action_space, device=env.device)
        # The task closes with the with-block, not at the interpreter's exit.
        trainer = SequentialTrainer(cfg={"timesteps": HORIZON * UPDATES, "headless": True,
                                         "disable_progressbar": True,
                                         "close_environment_at_exit": False},
                                    env=env, agents=agent)
        trainer.train()
        agent.writer.flush()
    assert bridged.steps == HORIZON * UPDATES
    logged = scalars(tmp_path / "ant")
    for tag in ("Loss / Policy loss", "Loss / Value loss"):  # one point per update
        finite(logged[tag], UPDATES)
    finite(logged["Reward / Total reward (mean)"])
    # The ant times out after EPISODE steps unless it falls first; skrl counts the steps
    # from the terminated/truncated flags, so the longest episodes are EPISODE long.
    assert set(logged["Episode / Total timesteps (max)"]) == {EPISODE}, logged


def ant_ppo(train_dir: Path) -> dict[str, Any]:
    """IsaacGymEnvs' ``cfg/train/AntPPO.yaml``, resolved, sized for a short CPU run:
    smaller MLP, batch and epochs; no mixed precision or ``torch.compile`` on the CPU."""
    return {"params": {
        "seed": 0,
        "algo": {"name": "a2c_continuous"},
        "model": {"name": "continuous_a2c_logstd"},
        "network": {"name": "actor_critic", "separate": False,
                    "space": {"continuous": {"mu_activation": "None",
                                             "sigma_activation": "None",
                                             "mu_init": {"name": "default"},
                                             "sigma_init": {"name": "const_initializer",
                                                            "val": 0},
                                             "fixed_sigma": True}},
                    "mlp": {"units": [64, 64], "activation": "elu", "d2rl": False,
                            "initializer": {"name": "default"},
                            "regularizer": {"name": "None"}}},
        "load_checkpoint": False,
        "torch_threads": 1,
        "config": {
            "name": "Ant", "full_experiment_name": "Ant", "env_name": "rlgpu",
            "device": "cpu", "train_dir": str(train_dir),
            "multi_gpu": False, "ppo": True, "mixed_precision": False, "torch_compile": False,
            "normalize_input": True, "normalize_value": True, "value_bootstrap": True,
            "num_actors": NUM_ENVS, "reward_shaper": {"scale_value": 0.01},
            "normalize_advantage": True, "gamma": 0.99, "tau": 0.95, "learning_rate": 3e-4,
            "lr_schedule": "adaptive", "schedule_type": "legacy", "kl_threshold": 0.008,
            "score_to_win": 20000, "max_epochs": UPDATES, "save_best_after": 10 * UPDATES,
            "save_frequency": 0, "grad_norm": 1.0, "entropy_coef": 0.0,
            "truncate_grads": False, "e_clip": 0.2, "horizon_length": HORIZON,
            "minibatch_size": NUM_ENVS * HORIZON // 2, "mini_epochs": 4, "critic_coef": 2,
            "clip_value": True, "seq_len": 4, "bounds_loss_coef": 0.0001}}}


def test_rl_games_ppo_trains_the_bridged_ant(isaacgym_fake_python: str,
                                            tmp_path: Path) -> None:
    from rl_games.common import env_configurations, vecenv
    from rl_games.common.algo_observer import DefaultAlgoObserver
    from rl_games.torch_runner import Runner

    from unisim.task_bridge.rl_games import RlGamesVecEnv

    class Observer(DefaultAlgoObserver):  # type: ignore[misc]
        """rl_games' default observer; keeps the epochs and the env frames counted so far."""

        def __init__(self) -> None:
            super().__init__()
            self.seen: list[tuple[int, int]] = []

        def after_print_stats(self, frame: int, epoch_num: int, total_time: float) -> None:
            super().after_print_stats(frame, epoch_num, total_time)
            self.seen.append((epoch_num, self.algo.frame))

    with BridgedTask(ANT, NUM_ENVS, style="vec_task", cfg=ant_cfg(episode_length=EPISODE),
                     paths=[EXAMPLES], python=isaacgym_fake_python) as task:
        bridged = CountingEnv(task)
        vecenv.register("RLGPU", lambda config_name, num_actors, **kwargs:
                        RlGamesVecEnv(config_name, num_actors, **kwargs))
        env_configurations.register("rlgpu", {"vecenv_type": "RLGPU",
                                              "env_creator": lambda **kwargs: bridged})
        with pytest.raises(ValueError, match="num_actors is 16 but the task has 32 envs"):
            RlGamesVecEnv("rlgpu", 16)
        env_configurations.register("unwrapped", {"vecenv_type": "RLGPU",
                                                  "env_creator": lambda **kwargs: task})
        with pytest.raises(TypeError, match=r"returned BridgedTask; make it return "
                                            r"IsaacGymPreview4Env\(BridgedTask"):
            RlGamesVecEnv("unwrapped", NUM_ENVS)
        observer = Observer()
        runner = Runner(observer)
        runner.load(ant_ppo(tmp_path))
        runner.reset()
        runner.run({"train": True, "play": False, "checkpoint": None, "sigma": None})
        observer.algo.writer.close()
    batch = NUM_ENVS * HORIZON
    assert observer.seen == [(epoch, epoch * batch) for epoch in range(1, UPDATES + 1)]
    assert bridged.steps * NUM_ENVS == UPDATES * batch
    logged = scalars(tmp_path / "Ant" / "summaries")
    for tag in ("losses/a_loss", "losses/c_loss"):  # one point per epoch
        finite(logged[tag], UPDATES)
    finite(logged["rewards/iter"])
    lengths = finite(logged["episode_lengths/iter"])
    assert all(0 < length <= EPISODE for length in lengths), lengths
