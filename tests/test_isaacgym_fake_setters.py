"""The SDK fake's tensor setters called more than once between two simulates, and tensors
acquired before ``prepare_sim``: what the SDK does there (docs/isaacgym.md, "Setters
called more than once per step"), run for real on the fake's Python 3.8.

The IsaacGym docs (Tensor API, "Limitations"): the GPU pipeline applies one call of a setter
per ``simulate``, the last; the CPU pipeline applies every call. legged_gym-style tasks
reset some envs and push others with two indexed calls in one step; tasks reset every env
in ``__init__`` and again from their runner; IsaacGymEnvs' FrankaCubeStack acquires its
tensors before ``prepare_sim``. All of these run on the SDK, so they run on the fake.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from unisim.task_bridge import BridgedTask

from .task_bridge_support import ANT, EXAMPLES, ant_cfg

FIXTURES = Path(__file__).resolve().parent / "fixtures"
WARNING = "[isaacgym fake] Warning: set_actor_root_state_tensor_indexed called again"

# Four free boxes without ground: a reset moves envs 0 and 1 by +0.5 in x, then a push gives
# the envs in PUSHED a velocity of 1 m/s along x, both through the indexed root setter.
RESET_THEN_PUSH = """
    gym, sim, envs, _ = build(BOX, num_envs=4, ground=False, dt=0.01)
    assert gym.prepare_sim(sim)
    root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
    gym.refresh_actor_root_state_tensor(sim)
    x0 = root[:, 0].clone()
    unwrap = gymtorch.unwrap_tensor
    outcome = {}
    for _ in range(STEPS):
        reset = torch.tensor([0, 1], dtype=torch.int32)
        root[reset.long(), 0] += 0.5
        root[reset.long(), 7:13] = 0.0
        gym.set_actor_root_state_tensor_indexed(sim, unwrap(root), unwrap(reset), len(reset))
        pushed = torch.tensor(PUSHED, dtype=torch.int32)
        root[pushed.long(), 7] = 1.0
        try:
            gym.set_actor_root_state_tensor_indexed(sim, unwrap(root), unwrap(pushed),
                                                    len(pushed))
        except RuntimeError as exc:
            outcome["raised"] = "%s: %s" % (type(exc).__name__, exc)
        gym.simulate(sim)
        gym.refresh_actor_root_state_tensor(sim)
    outcome["dx"] = (root[:, 0] - x0).tolist()
    outcome["vx"] = root[:, 7].tolist()
    print(json.dumps(outcome))
"""


def run(python: str, code: str, **env: str) -> tuple[dict[str, Any], str]:
    """Run ``code`` on the fake's Python; the JSON of its last stdout line, and its stderr."""
    result = subprocess.run(
        [python, "-c", "from isaacgym_fake_scenes import *\nimport json\n"
         + textwrap.dedent(code)], cwd=FIXTURES, capture_output=True, text=True, timeout=300,
        env={**{k: v for k, v in os.environ.items() if k != "UNISIM_FAKE_STRICT"},
             "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl"), **env}, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def test_a_push_after_a_reset_in_one_step_applies_both(isaacgym_fake_python: str) -> None:
    """The legged_gym forks' pattern: the pushed envs (episode length a multiple of the push
    interval) include the envs just reset, so the last call covers every row: nothing is
    lost on either pipeline, and the fake says nothing."""
    out, stderr = run(isaacgym_fake_python, RESET_THEN_PUSH.replace("STEPS", "1")
                      .replace("PUSHED", "[0, 1, 2]"))
    assert "raised" not in out, out
    # reset envs keep their reset place and take the push; env 2 is pushed; env 3 untouched
    assert out["dx"] == pytest.approx([0.51, 0.51, 0.01, 0.0], abs=1e-3)
    assert out["vx"] == pytest.approx([1.0, 1.0, 1.0, 0.0], abs=1e-3)
    assert "Warning" not in stderr, stderr


def test_a_push_that_leaves_out_reset_envs_warns_once_naming_them(
        isaacgym_fake_python: str) -> None:
    """The push leaves out envs 0 and 1, which the reset set: the CPU pipeline applies
    both calls (the docs' limitations "don't apply with the CPU pipeline"), and the fake
    warns once, naming the rows the GPU pipeline would drop."""
    out, stderr = run(isaacgym_fake_python, RESET_THEN_PUSH.replace("STEPS", "3")
                      .replace("PUSHED", "[2, 3]"))
    assert "raised" not in out, out
    assert out["dx"] == pytest.approx([1.5, 1.5, 0.03, 0.03], abs=2e-3)
    assert out["vx"] == pytest.approx([0.0, 0.0, 1.0, 1.0], abs=1e-3)
    assert stderr.count(WARNING) == 1, stderr  # three steps, one warning
    line = next(line for line in stderr.splitlines() if WARNING in line)
    assert "indices [0, 1] (2)" in line and "would drop" in line and "union" in line, line


def test_the_strict_switch_makes_the_warning_an_error(isaacgym_fake_python: str) -> None:
    out, stderr = run(isaacgym_fake_python, RESET_THEN_PUSH.replace("STEPS", "1")
                      .replace("PUSHED", "[2, 3]"), UNISIM_FAKE_STRICT="1")
    assert out["raised"].startswith("FakeError: set_actor_root_state_tensor_indexed called "
                                    "again before simulate without actor indices [0, 1]"), out
    assert "UNISIM_FAKE_STRICT=1" in out["raised"]
    # the refused call set nothing; the reset before it stands
    assert out["dx"] == pytest.approx([0.5, 0.5, 0.0, 0.0], abs=1e-3)
    assert out["vx"] == pytest.approx([0.0, 0.0, 0.0, 0.0], abs=1e-3)
    assert "Warning" not in stderr, stderr


def test_the_gpu_pipelines_rule_keeps_the_last_call_until_simulate(
        isaacgym_fake_python: str) -> None:
    """The GPU pipeline's rule (the docs' "Limitations"): a setter's values are applied at
    the next simulate (a refresh before reads the old state), and only its last call's.
    CI has no CUDA, so the sim's pipeline flag is flipped on a CPU sim (the rule is chosen
    by it alone); tests/fixtures/isaacgym_fake_gpu_check.py runs the same on CUDA."""
    code = RESET_THEN_PUSH.replace("STEPS", "1").replace(
        "assert gym.prepare_sim(sim)", "sim._state.gpu = True\n    assert gym.prepare_sim(sim)"
    ).replace("        gym.simulate(sim)", "        gym.refresh_actor_root_state_tensor(sim)\n"
              "        outcome['stale'] = (root[:, 0] - x0).tolist()\n        gym.simulate(sim)")
    covered, _ = run(isaacgym_fake_python, code.replace("PUSHED", "[0, 1, 2]"))
    assert covered["stale"] == pytest.approx([0.0] * 4)
    assert covered["dx"] == pytest.approx([0.51, 0.51, 0.01, 0.0], abs=1e-3)
    assert covered["vx"] == pytest.approx([1.0, 1.0, 1.0, 0.0], abs=1e-3)
    dropped, stderr = run(isaacgym_fake_python, code.replace("PUSHED", "[2, 3]"))
    assert dropped["dx"] == pytest.approx([0.0, 0.0, 0.01, 0.01], abs=1e-3)  # reset lost
    assert dropped["vx"] == pytest.approx([0.0, 0.0, 1.0, 1.0], abs=1e-3)
    assert stderr.count(WARNING) == 1 and "so it drops those rows" in stderr, stderr


def test_a_reset_in_init_and_again_before_the_first_simulate(isaacgym_fake_python: str) -> None:
    """A task resets every env in ``__init__`` and its runner resets them all again before
    the first simulate: the second call's state is the one simulated, silently."""
    out, stderr = run(isaacgym_fake_python, """
        gym, sim, envs, _ = build(HINGE, num_envs=3, ground=False, dt=0.01)
        assert gym.prepare_sim(sim)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        dofs = gymtorch.wrap_tensor(gym.acquire_dof_state_tensor(sim))
        gym.refresh_actor_root_state_tensor(sim)
        x0 = root[:, 0].clone()
        unwrap = gymtorch.unwrap_tensor
        every = torch.arange(3, dtype=torch.int32)
        for shift, angle in ((0.2, 0.3), (0.4, 0.7)):  # __init__'s reset, then the runner's
            dofs[:, 0], dofs[:, 1] = angle, 0.0
            gym.set_dof_state_tensor_indexed(sim, unwrap(dofs), unwrap(every), 3)
            root[:, 0] = x0 + shift
            root[:, 7:13] = 0.0
            gym.set_actor_root_state_tensor_indexed(sim, unwrap(root), unwrap(every), 3)
        gym.simulate(sim)
        gym.refresh_actor_root_state_tensor(sim)
        gym.refresh_dof_state_tensor(sim)
        print(json.dumps({"dx": (root[:, 0] - x0).tolist(), "angle": dofs[:, 0].tolist()}))
    """)
    assert out["dx"] == pytest.approx([0.4] * 3, abs=1e-3)
    assert out["angle"] == pytest.approx([0.7] * 3, abs=1e-3)
    assert "Warning" not in stderr, stderr


def test_tensors_acquired_before_prepare_sim_are_the_ones_the_sim_fills(
        isaacgym_fake_python: str) -> None:
    """FrankaCubeStack's order: acquire and wrap (and view) in ``create_sim``, then
    ``prepare_sim``, then read: the early views see the prepared state and every refresh."""
    out, stderr = run(isaacgym_fake_python, """
        gym, sim, envs, _ = build(BOX, num_envs=2, ground=False, height=5.0, dt=0.01)
        early = {name: gymtorch.wrap_tensor(getattr(gym, "acquire_%s_tensor" % name)(sim))
                 for name in ("actor_root_state", "rigid_body_state", "dof_state")}
        bodies = early["rigid_body_state"].view(2, -1, 13)
        assert gym.prepare_sim(sim)
        late = tensors(gym, sim)
        same = all(early[n].data_ptr() == late[n].data_ptr() for n in early)
        prepared_z = early["actor_root_state"][:, 2].tolist()
        step(gym, sim, 10)
        gym.refresh_actor_root_state_tensor(sim)
        gym.refresh_rigid_body_state_tensor(sim)
        print(json.dumps({
            "same_storage": same, "shapes": [list(early[n].shape) for n in sorted(early)],
            "prepared_z": prepared_z, "z": early["actor_root_state"][:, 2].tolist(),
            "vz": early["actor_root_state"][:, 9].tolist(),
            "marker_z": bodies[:, 1, 2].tolist()}))
    """)
    assert out["same_storage"] is True
    assert out["shapes"] == [[2, 13], [0, 2], [4, 13]]  # roots, DOFs, bodies
    assert out["prepared_z"] == pytest.approx([5.0, 5.0])
    assert out["vz"] == pytest.approx([-0.981, -0.981], abs=1e-3)  # ten steps of 0.01 s
    assert out["z"] == pytest.approx(out["marker_z"], abs=1e-5)
    assert out["z"][0] < 5.0 - 0.04
    assert "Warning" not in stderr and "Error" not in stderr, stderr


def test_the_ci_tasks_train_through_both_patterns_and_lose_no_rows(
        isaacgym_fake_python: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CI tasks (examples/isaacgym_tasks) that CI trains do what the public tasks do: the
    quadruped resets every env in ``__init__`` and again from the bridge's ``reset()``
    before the first simulate, and pushes with a second indexed root call in the steps
    that reset; the ant acquires its tensors before ``prepare_sim``. Under the strict
    switch a lost row would stop the worker: none is lost."""
    monkeypatch.setenv("UNISIM_FAKE_STRICT", "1")
    traces = {}
    for name in ("quadruped", "ant"):
        traces[name] = tmp_path / f"{name}.trace"
        monkeypatch.setenv("ISAACGYM_FAKE_TRACE", str(traces[name]))
        if name == "quadruped":
            task = BridgedTask("ci_quadruped", 4, style="legged_gym",
                               registry="isaacgym_tasks.legged:task_registry",
                               overrides={"env.episode_length_s": 0.1}, paths=[EXAMPLES],
                               python=isaacgym_fake_python)
        else:
            task = BridgedTask(ANT, 2, style="vec_task", cfg=ant_cfg(episode_length=4),
                               paths=[EXAMPLES], python=isaacgym_fake_python)
        with task:
            steps = [task.step(torch.zeros(task.num_envs, task.num_actions)) for _ in range(8)]
        assert any(bool(s.done.any()) for s in steps)
    root, dofs = "set_actor_root_state_tensor_indexed", "set_dof_state_tensor_indexed"
    calls = traces["quadruped"].read_text().split()
    between = " ".join(calls).split(" simulate ")
    assert between[0].split().count(root) == between[0].split().count(dofs) == 2
    assert any(part.split().count(root) == 2 and part.split().count(dofs) == 1
               for part in between[1:])  # a reset, then a push of the envs just reset
    calls = traces["ant"].read_text().split()
    assert calls.index("acquire_actor_root_state_tensor") < calls.index("prepare_sim")
    assert calls.index("acquire_dof_state_tensor") < calls.index("prepare_sim")
