"""The MuJoCo worker against in-process MuJoCo, on this interpreter and on Python 3.8."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import unisim
from unisim import models
from unisim.channel import Channel
from unisim.errors import RemoteError
from unisim_protocol import Command

from . import reference

QUADRUPED = str(models.path("quadruped"))
NUM_ENVS, STEPS, SUBSTEPS = 5, 40, 2


def _controls(nu: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.uniform(-1.0, 1.0, size=(STEPS, NUM_ENVS, nu))


def _drive(sim: unisim.Backend, controls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    qpos, qvel = [sim.qpos.copy()], [sim.qvel.copy()]
    for ctrl in controls:
        sim.step(ctrl, substeps=SUBSTEPS)
        qpos.append(sim.qpos.copy())
        qvel.append(sim.qvel.copy())
    return np.array(qpos), np.array(qvel)


def test_same_interpreter_worker_is_bitwise_in_process() -> None:
    controls = _controls(8)
    with unisim.Backend("mujoco", model="quadruped", num_envs=NUM_ENVS, keyframe="stand") as sim:
        assert sim.worker_info["python"] == ".".join(map(str, sys.version_info[:3]))
        qpos, qvel = _drive(sim, controls)
    ref_qpos, ref_qvel = reference.rollout(QUADRUPED, "stand", NUM_ENVS, SUBSTEPS, controls)
    assert np.array_equal(qpos, ref_qpos)
    assert np.array_equal(qvel, ref_qvel)
    assert not np.array_equal(qpos[0], qpos[-1])  # it really moved


def test_python38_worker_is_bitwise_in_process_mujoco_of_its_interpreter(
        py38: str, tmp_path: Path) -> None:
    controls = _controls(8)
    with unisim.Backend("mujoco", model="quadruped", num_envs=NUM_ENVS, keyframe="stand",
                        python=py38) as sim:
        assert sim.worker_info["python"].startswith("3.8.")
        assert sim.layout.engine_version.startswith("3.2.")
        qpos, qvel = _drive(sim, controls)
        rows = np.array([1, 3])
        new_qpos = np.tile(sim.qpos[0], (2, 1))
        sim.reset(rows, qpos=new_qpos)
        assert np.array_equal(sim.qpos[rows], new_qpos)
        assert np.array_equal(sim.qvel[rows], np.zeros((2, sim.layout.nv)))
    np.save(tmp_path / "ctrl.npy", controls)
    script = Path(reference.__file__)
    subprocess.run([py38, str(script), QUADRUPED, "stand", str(NUM_ENVS), str(SUBSTEPS),
                    str(tmp_path / "ctrl.npy"), str(tmp_path / "ref.npz")], check=True)
    ref = np.load(tmp_path / "ref.npz")
    assert str(ref["version"]) == sim.layout.engine_version
    assert np.array_equal(qpos, ref["qpos"])
    assert np.array_equal(qvel, ref["qvel"])


@pytest.mark.parametrize("interpreter", ["host", "py38"])
def test_reset_selected_envs(interpreter: str, request: pytest.FixtureRequest) -> None:
    python = request.getfixturevalue("py38") if interpreter == "py38" else None
    with unisim.Backend("mujoco", model="cartpole", num_envs=4, python=python) as sim:
        assert sim.layout.joint_names == ("slider", "hinge")
        assert sim.layout.actuator_names == ("push",)
        for _ in range(20):
            sim.step(np.ones((4, 1)))
        moved = sim.qpos.copy()
        sim.reset([0, 2], qpos=[[0.5, 0.1], [-0.5, -0.1]], qvel=[0.0, 1.0])
        assert np.array_equal(sim.qpos[[0, 2]], [[0.5, 0.1], [-0.5, -0.1]])
        assert np.array_equal(sim.qvel[[0, 2]], [[0.0, 1.0], [0.0, 1.0]])
        assert np.array_equal(sim.qpos[[1, 3]], moved[[1, 3]])  # others untouched
        sim.reset(np.array([False, True, False, False]))
        assert np.array_equal(sim.qpos[1], [0.0, 0.0])
        sim.reset()
        assert not sim.qpos.any() and not sim.qvel.any()


def test_views_are_zero_copy_and_torch_shares_them() -> None:
    torch = pytest.importorskip("torch", reason="torch is in the dev extras; install .[dev]")
    with unisim.Backend("mujoco", model="cartpole", num_envs=3) as sim:
        tensors = sim.tensors()
        assert tensors["qpos"].shape == (3, 2) and tensors["qpos"].dtype == torch.float64
        sim.step(torch.full((3, 1), 0.5))
        assert np.array_equal(sim.ctrl, np.full((3, 1), 0.5))
        assert torch.equal(tensors["qpos"], torch.from_numpy(sim.qpos.copy()))
        assert tensors["qpos"].abs().sum() > 0


def test_a_block_is_one_view_over_adjacent_slots_and_refuses_others() -> None:
    torch = pytest.importorskip("torch", reason="torch is in the dev extras; install .[dev]")
    with unisim.Backend("mujoco", model="cartpole", num_envs=3) as sim:
        sim.step(np.ones((3, 1)))
        tensors = sim.tensors()
        block = sim.block(("qpos", "qvel"))
        assert block.dtype == torch.uint8
        for name in ("qpos", "qvel"):
            start = tensors[name].data_ptr() - block.data_ptr()
            part = block[start:start + tensors[name].nbytes].view(torch.float64).view(3, 2)
            assert torch.equal(part, tensors[name]) and part.abs().sum() > 0
        with pytest.raises(ValueError, match=r"slots \['qvel', 'qpos'\] are not adjacent"):
            sim.block(("qvel", "qpos"))


def test_bad_inputs_name_the_problem() -> None:
    with unisim.Backend("mujoco", model="cartpole", num_envs=3) as sim:
        with pytest.raises(ValueError, match=r"ctrl must broadcast to shape \(3, 1\)"):
            sim.step(np.zeros((2, 1)))
        with pytest.raises(ValueError, match="substeps must be a positive int"):
            sim.step(substeps=0)
        with pytest.raises(IndexError, match=r"env_ids must lie in \[0, 3\)"):
            sim.reset([5])
        with pytest.raises(ValueError, match="qpos contains NaN"):
            sim.reset([0], qpos=[np.nan, 0.0])
        with pytest.raises(ValueError, match=r"qpos must broadcast to shape \(1, 2\)"):
            sim.reset([0], qpos=[1.0, 2.0, 3.0])
        sim.step(np.ones((3, 1)))  # still usable
    with pytest.raises(unisim.RemoteError, match=r"no keyframe 'nope'.*upright"):
        unisim.Backend("mujoco", model="cartpole", keyframe="nope")
    with pytest.raises(FileNotFoundError, match="neither an MJCF file"):
        unisim.Backend("mujoco", model="/no/such/model.xml")
    with pytest.raises(unisim.SetupError, match="not an executable"):
        unisim.Backend("mujoco", model="cartpole", python="/no/such/python")


def test_views_after_close_do_not_crash() -> None:
    sim = unisim.Backend("mujoco", model="cartpole", num_envs=2)
    qpos = sim.qpos
    sim.step(np.ones((2, 1)))
    last = qpos.copy()
    sim.close()
    sim.close()  # idempotent
    assert np.array_equal(qpos, last)  # the kept view is still readable
    with pytest.raises(unisim.BackendDead, match="closed"):
        sim.step()
    with pytest.raises(unisim.BackendDead):
        _ = sim.qpos


def test_xml_string_model_and_pipe_bytes_constant_in_num_envs() -> None:
    xml = models.path("cartpole").read_text()
    written = []
    for num_envs in (16, 1024):
        with unisim.Backend("mujoco", model=xml, num_envs=num_envs) as sim:
            io = Path(f"/proc/{sim.worker_pid}/io")
            before = int(io.read_text().split("wchar: ")[1].split()[0])
            for _ in range(100):
                sim.step()
            after = int(io.read_text().split("wchar: ")[1].split()[0])
            written.append((after - before) / 100)
    assert written[0] == written[1] <= 256


def test_a_step_before_attach_is_refused_and_the_worker_serves_on(py38_channel: Channel) -> None:
    """The engine steps in the slots that ATTACH maps; a STEP before them is the caller's
    mistake, answered as such, not an engine fault that takes the worker down."""
    py38_channel.hello(30)
    py38_channel.request(Command.INIT, {"engine": "mujoco", "num_envs": 1, "keyframe": None,
                                        "model": str(models.path("cartpole")),
                                        "options": {}}, 60)
    with pytest.raises(RemoteError, match="STEP before ATTACH") as error:
        py38_channel.request(Command.STEP, {}, 10)
    assert not error.value.faulted
    assert py38_channel.request(Command.PING, {}, 10) == {}
