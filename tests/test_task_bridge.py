"""The task bridge: an IsaacGym task, unmodified, in a Python 3.8 worker on the SDK fake.

The task is the CI ant (examples/isaacgym_tasks, in IsaacGymEnvs' style); the same task
stepped in-process on the worker's interpreter is the reference.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import unisim_protocol
from unisim import cli, split
from unisim.errors import RemoteError, WorkerTimeout
from unisim.integrations.gymnasium import GymnasiumVectorEnv
from unisim.task_bridge import BridgedTask
from unisim.task_bridge.preview4 import IsaacGymPreview4Env
from unisim.task_bridge.rsl_rl import RslRlTaskEnv, obs_groups

from .task_bridge_support import ANT, EXAMPLES, FAULTY, INPROCESS, ant_cfg


def ant(python: str, num_envs: int, **kwargs: Any) -> BridgedTask:
    kwargs.setdefault("cfg", ant_cfg())
    return BridgedTask(kwargs.pop("task", ANT), num_envs, style="vec_task",
                       paths=[EXAMPLES, FAULTY], python=python, **kwargs)


def test_a_bridged_task_steps_bitwise_as_the_same_task_in_process(
        isaacgym_fake_python: str, tmp_path: Path) -> None:
    generator = torch.Generator().manual_seed(1)
    actions = torch.rand(40, 6, 8, generator=generator) * 2.0 - 1.0
    cfg = ant_cfg(episode_length=16)
    cfg["env"]["terminationHeight"] = 0.45  # some envs fall before their time-out
    with ant(isaacgym_fake_python, 6, cfg=cfg, seed=3) as task:
        assert (task.num_observations, task.num_privileged_observations,
                task.num_actions, task.max_episode_length) == (33, 35, 8, 16)
        assert task.step_dt == pytest.approx(0.0166) and task.log_names == ("length", "return")
        assert task.sim.layout.engine == "task" and task.sim.worker_info["python"] < "3.9"
        # The task steps on threads over every core: the host keeps none, and sleeps
        # until woken instead of dozing and spinning on a core the task's threads need.
        assert task.sim.split.threads == split.cores() and not task.sim.split.spare_core()
        steps = [task.step(a) for a in actions]
        (tmp_path / "options.json").write_text(json.dumps(task.options))
    np.save(tmp_path / "actions.npy", actions.numpy())
    subprocess.run([isaacgym_fake_python, str(INPROCESS), "rollout",
                    str(tmp_path / "options.json"), "6", str(tmp_path / "actions.npy"),
                    str(tmp_path / "ref.npz")], check=True, cwd=INPROCESS.parent)
    ref = np.load(tmp_path / "ref.npz")
    assert np.array_equal(np.stack([s.observations.numpy() for s in steps]), ref["obs"])
    assert np.array_equal(np.stack([s.rewards.numpy() for s in steps]), ref["rew"])
    done, time_outs = ref["done"], ref["time_outs"]
    assert np.array_equal(np.stack([s.terminated.numpy() for s in steps]), done & ~time_outs)
    assert np.array_equal(np.stack([s.truncated.numpy() for s in steps]), done & time_outs)
    assert (done & time_outs).any() and (done & ~time_outs).any()
    assert len(np.unique(ref["obs"][-1], axis=0)) == 6  # every env its own state
    logged = {"Episode_Extras/return", "Episode_Extras/length"}
    assert any(s.log for s in steps) and all(set(s.log) <= logged for s in steps)


def test_resets_start_new_episodes_only_where_the_task_has_not(
        isaacgym_fake_python: str) -> None:
    with ant(isaacgym_fake_python, 4, cfg=ant_cfg(episode_length=6)) as task:
        task.step(torch.zeros(4, 8))  # the first step resets every env, as IsaacGymEnvs does
        assert task.episode_length_buf.tolist() == [0, 0, 0, 0]
        for _ in range(3):
            before = task.step(torch.zeros(4, 8)).observations
        assert task.episode_length_buf.tolist() == [3, 3, 3, 3]
        after = task.reset(torch.tensor([False, True, False, True]))
        assert task.episode_length_buf.tolist() == [3, 0, 3, 0]
        assert torch.equal(after[[0, 2]], before[[0, 2]])
        assert not torch.equal(after[[1, 3]], before[[1, 3]])
        task.reset([1, 3])  # already at the start of an episode: nothing to do
        with pytest.raises(ValueError, match="a second reset since the last step"):
            task.reset()  # the SDK would keep only this call's setter rows
        task.step(torch.zeros(4, 8))
        task.episode_length_buf = torch.tensor([4, 0, 0, 0])  # rsl_rl's random start
        assert task.step(torch.zeros(4, 8)).truncated.tolist() == [True, False, False, False]


def test_the_learners_surfaces(isaacgym_fake_python: str) -> None:
    with ant(isaacgym_fake_python, 4, cfg=ant_cfg(episode_length=5)) as task:
        env = RslRlTaskEnv(task)
        observations = env.get_observations()
        assert observations["policy"].shape == (4, 33) and observations["critic"].shape == (4, 35)
        assert obs_groups(task) == {"actor": ["policy"], "critic": ["critic"]}
        for _ in range(6):
            observations, rewards, _, extras = env.step(torch.zeros(4, 8))
        assert rewards.shape == (4,) and extras["time_outs"].dtype == torch.bool
        assert set(observations.keys()) == {"policy", "critic"}
        gym_env = GymnasiumVectorEnv(task)
        obs, _ = gym_env.reset()
        obs, *_ = gym_env.step(np.zeros((4, 8), np.float32))
        assert obs.shape == (4, 33) and gym_env.single_action_space.high.tolist() == [1.0] * 8
        preview = IsaacGymPreview4Env(task)
        assert (preview.num_obs, preview.num_states, preview.num_actions) == (33, 35, 8)
        assert preview.observation_space.shape == (33,) and preview.state_space.shape == (35,)
        obs_dict, _, reset, extras = preview.step(torch.zeros(4, 8))
        assert obs_dict["obs"].shape == (4, 33) and obs_dict["states"].shape == (4, 35)
        assert reset.dtype == torch.long and "time_outs" in extras
        assert preview.reset()["obs"].shape == (4, 33) and preview.get_number_of_agents() == 1


def test_actions_that_are_not_finite_are_refused_and_large_finite_ones_are_not(
        isaacgym_fake_python: str) -> None:
    with ant(isaacgym_fake_python, 2) as task:
        lengths = task.episode_length_buf.clone()
        # float64 beyond float32's range would reach the task as inf: refused as well
        for bad, dtype in ((float("nan"), torch.float32), (float("inf"), torch.float32),
                           (1e300, torch.float64)):
            actions = torch.zeros(2, 8, dtype=dtype)
            actions[1, 3] = bad
            with pytest.raises(ValueError, match="NaN or infinite values"):
                task.step(actions)
        assert torch.equal(task.episode_length_buf, lengths)  # nothing stepped
        # finite, though their sum is not: the task clips them to its action range
        step = task.step(torch.full((2, 8), 3e38))
        assert torch.isfinite(step.observations).all()


def test_a_traced_worker_stamps_each_step_within_the_hosts_call(
        isaacgym_fake_python: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # benchmarks/latency/task_bridge_phases.py lines these stamps up with the host's
    folder = tmp_path / "times"  # made by the worker
    monkeypatch.setenv("UNISIM_TRACE_TIMES", str(folder))
    calls = []
    with ant(isaacgym_fake_python, 4) as task:
        for _ in range(3):
            started = time.perf_counter()
            task.step(torch.zeros(4, 8))
            calls.append((started, time.perf_counter()))
    lines = [json.loads(line) for path in folder.glob("*.jsonl")
             for line in path.read_text().splitlines()]
    steps = [line for line in lines if line["command"] == "STEP"]
    assert len(steps) == 3
    for (started, ended), line in zip(calls, steps, strict=True):
        task_started, task_ended = line["task_step"]
        assert started < line["woke"] <= task_started < task_ended <= line["replied"] < ended


def test_a_step_marked_soon_wakes_the_sleeping_worker_before_the_ring(
        isaacgym_fake_python: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``step`` marks the request near before it copies and checks the actions
    (``Backend.step_soon``): the worker, asleep while the host works, wakes on the mark
    and clears it, without a request."""
    bell = unisim_protocol.doorbell
    with ant(isaacgym_fake_python, 2) as task:
        calls: list[str] = []

        def noted(name: str) -> Any:
            method = getattr(task.sim, name)

            def call(*args: Any, **kwargs: Any) -> Any:
                calls.append(name)
                return method(*args, **kwargs)
            return call

        for name in ("step_soon", "step"):
            monkeypatch.setattr(task.sim, name, noted(name))
        task.step(torch.zeros(2, 8))
        assert calls == ["step_soon", "step"]
        words = task.sim._stepping.lines[0].words
        deadline = time.monotonic() + 5.0
        while not words[bell.WORKER_WAITING]:  # past its spin, asleep
            assert time.monotonic() < deadline, "the worker never slept"
        requests = words[bell.REQUEST]
        # Stopped, the worker cannot clear the mark before it is read (the wake may run it
        # at once on this core); once continued, it finds the mark and clears it.
        os.kill(task.sim.worker_pid, signal.SIGSTOP)
        try:
            task.sim.step_soon()
            marked = words[bell.REQUEST_NEAR]
        finally:
            os.kill(task.sim.worker_pid, signal.SIGCONT)
        deadline = time.monotonic() + 5.0
        while words[bell.REQUEST_NEAR] and time.monotonic() < deadline:
            pass
        assert (marked, words[bell.REQUEST_NEAR], words[bell.REQUEST]) == (1, 0, requests)
        task.step(torch.zeros(2, 8))  # and the next request is served as ever


def test_an_error_in_the_task_comes_back_with_its_traceback(isaacgym_fake_python: str) -> None:
    with ant(isaacgym_fake_python, 2, task="bridge_tasks.faulty:RaisingAnt") as task:
        with pytest.raises(RemoteError) as info:
            for _ in range(5):
                task.step(torch.zeros(2, 8))
    error = info.value
    assert error.exc_type == "ZeroDivisionError" and error.faulted
    assert "the torso's drag coefficient is zero" in str(error)
    assert "faulty.py" in error.remote_traceback and "compute_torso_drag" in error.remote_traceback


def test_a_task_that_fails_to_build_comes_back_with_the_sdks_reason(
        isaacgym_fake_python: str) -> None:
    """The SDK reports a refused asset on stderr and returns None; the task then fails on
    the None. Both reach the user: the traceback and the worker's stderr."""
    with pytest.raises(RemoteError) as info:
        ant(isaacgym_fake_python, 2, task="bridge_tasks.faulty:MislaidAnt")
    error = info.value
    assert "NoneType" in error.remote_message and "create_sim" in error.remote_traceback
    assert "load_asset: no such file" in error.stderr_tail
    assert "no-such-folder" in str(error)


def test_bad_options_are_refused_by_name(isaacgym_fake_python: str) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
            ({"task": "isaacgym_tasks.ant.Ant"}, "task must be 'package.module:Name'"),
            ({"task": "isaacgym_tasks.ant:Bee"}, "module isaacgym_tasks.ant has no Bee"),
            ({"cfg": {"env": {}}}, "style 'vec_task' needs cfg")]
    for kwargs, message in cases:
        with pytest.raises(RemoteError, match=message):
            ant(isaacgym_fake_python, 2, **kwargs)


def test_a_task_that_hangs_in_step_hits_the_deadline(isaacgym_fake_python: str) -> None:
    with ant(isaacgym_fake_python, 2, task="bridge_tasks.faulty:SleepingAnt",
             timeout=1.0) as task:
        with pytest.raises(WorkerTimeout) as info:
            task.step(torch.zeros(2, 8))
        assert "during STEP" in str(info.value) and "within 1 s" in str(info.value)
        assert info.value.timeout == 1.0


def test_the_task_command_checks_a_task(isaacgym_fake_python: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    cfg = EXAMPLES / "isaacgym_tasks" / "cfg" / "ant.json"
    assert cli.main(["task", "check", ANT, "--style", "vec_task", "--cfg", str(cfg),
                     "--path", str(EXAMPLES), "--python", isaacgym_fake_python,
                     "--num-envs", "4"]) == 0
    out = capsys.readouterr().out
    assert "isaacgym_tasks.ant.Ant on 3.8" in out and "33 observations, 35 privileged" in out
    assert "100 steps of random actions" in out
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["task", "check", ANT, "--style", "vec_task"])
    assert exit_info.value.code == 2
    assert "--style vec_task needs --cfg" in capsys.readouterr().err


def test_a_legged_gym_task_by_class_and_config(isaacgym_fake_python: str) -> None:
    kwargs: dict[str, Any] = {"style": "legged_gym", "paths": [EXAMPLES],
                              "python": isaacgym_fake_python,
                              "cfg": "isaacgym_tasks.legged.config:QuadrupedFlatCfg"}
    with BridgedTask("isaacgym_tasks.legged:LeggedRobot", 2,
                     overrides={"env.episode_length_s": 0.5}, **kwargs) as task:
        assert task.max_episode_length == 25 and task.step_dt == pytest.approx(0.02)
        assert task.info["style"] == "legged_gym" and task.num_privileged_observations == 41
        step = task.step(torch.zeros(2, 8))
        assert step.observations.shape == (2, 36) and "Episode_Extras/rew_torques" in step.log
    with pytest.raises(RemoteError, match=r"override 'env\.bogus': the config has no env\.bogus"):
        BridgedTask("isaacgym_tasks.legged:LeggedRobot", 2, overrides={"env.bogus": 1}, **kwargs)
