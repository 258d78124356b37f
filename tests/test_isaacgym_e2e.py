"""The IsaacGym adapter, end to end: a real Python 3.8 worker over the SDK fake.

``unisim_worker/isaacgym_fake`` plays the SDK (gymapi/gymtorch on MuJoCo physics, strict
about misuse); everything else is real: the worker process, the pipes, shared memory, the
adapter in ``unisim_worker/engines/isaacgym/``. CPU pipeline (no GPU here); the GPU pipeline
and the CUDA plane ran on the GPU machine (docs/isaacgym.md).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import imageio.v3
import mujoco
import numpy as np
import pytest

import unisim
from unisim import models, split
from unisim.errors import RemoteError, WorkerDied, WorkerTimeout
from unisim.video import VideoRecorder

CONFORMANCE = Path(__file__).resolve().parent / "conformance" / "models"
ARM = CONFORMANCE / "arm.xml"
CPU = {"pipeline": "cpu"}
NEAR = {"distance": 1.0, "elevation": 35.0}  # the arm fills the frame
Open = Callable[..., unisim.Backend]


@pytest.fixture
def isaacgym(isaacgym_fake_python: str) -> Open:
    """``Backend("isaacgym", ...)`` on the fake, CPU pipeline unless options say otherwise."""
    def make(model: str | Path = ARM, num_envs: int = 4, **kwargs: Any) -> unisim.Backend:
        options = {**CPU, **kwargs.pop("options", {})}
        return unisim.Backend("isaacgym", model, num_envs, python=isaacgym_fake_python,
                              options=options, progress=False, **kwargs)
    return make


def _bent(sim: unisim.Backend, angles: dict[int, float]) -> None:
    """Put the arm's shoulder of each env in ``angles`` at that angle, at rest, and step
    once with every servo holding its joint (IsaacGym shows a reset after a simulate)."""
    rows = sorted(angles)
    qpos = sim.qpos[rows].copy()
    qpos[:, 0] = [angles[r] for r in rows]
    sim.reset(rows, qpos=qpos, qvel=np.zeros((len(rows), sim.layout.nv)))
    sim.step(sim.qpos.copy())


def _differ(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


# -- capture ------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2])
def test_capture_renders_the_requested_env(isaacgym: Open, workers: int) -> None:
    """The frame of env k shows env k's state: equal to env j's frame once j is put in the
    same state, different from it before. With two workers, env 3 lives in the second."""
    with isaacgym(workers=workers, options={"camera": NEAR, "env_spacing": 40.0}) as sim:
        _bent(sim, {0: -1.2, 3: 1.2})
        frame = sim.capture(3, width=96, height=64)
        assert frame.shape == (64, 96, 3) and frame.dtype == np.uint8
        assert frame.max() > 0 and frame.std() > 1.0, "a black or blank frame"
        other = sim.capture(0, width=96, height=64)
        _bent(sim, {0: 1.2})
        again = sim.capture(0, width=96, height=64)
        apart, alike = _differ(frame, other), _differ(frame, again)
        assert apart > 0.2, f"env 0 and env 3 look the same in different states ({apart})"
        assert alike < 0.1 * apart, f"env 0 in env 3's state does not look like env 3 ({alike})"


def test_capture_sizes_and_refusals(isaacgym: Open) -> None:
    with isaacgym(options={"camera": {"width": 32, "height": 24, "envs": [1]}}) as sim:
        with pytest.raises(RemoteError, match="env 1 was reset \\(or built\\) since the last"):
            sim.capture(1, width=32, height=24)  # INIT's state is set by the first step
        sim.step()
        sim.capture(1, width=32, height=24)
        sim.reset([1])
        with pytest.raises(RemoteError, match="env 1 was reset"):
            sim.capture(1, width=32, height=24)
        sim.step()
        assert sim.capture(1, width=32, height=24).shape == (24, 32, 3)
        assert sim.capture(2, width=80, height=60).shape == (60, 80, 3)  # a sensor made now
        with pytest.raises(RemoteError, match="camera=None"):
            sim.capture(1, camera="track")
        with pytest.raises(IndexError, match="env_ids"):
            sim.capture(4)
        assert sim.ping() > 0
    with isaacgym() as sim, pytest.raises(RemoteError, match="no graphics device"):
        sim.capture(0)


def test_a_video_of_an_isaacgym_env(isaacgym: Open, tmp_path: Path) -> None:
    with isaacgym(options={"camera": NEAR}) as sim, \
            VideoRecorder(tmp_path / "arm.gif", sim, env_id=2, width=48, height=32) as video:
        for _ in range(3):
            sim.step(np.array([1.0, 0.1]), substeps=20)
            video.capture()
    frames = imageio.v3.imread(tmp_path / "arm.gif")
    assert frames.shape == (3, 32, 48, 3) and frames.max() > 0
    assert _differ(frames[0], frames[2]) > 0.5  # the arm moved


# -- state ----------------------------------------------------------------------------------

def _fk(model: mujoco.MjModel, qpos: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """Body origin positions of ``names`` for ``qpos``, by MuJoCo in this process."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    return np.array([data.xpos[model.body(name).id] for name in names])


def test_body_states_are_valid_right_after_init_and_reset(isaacgym: Open) -> None:
    """PhysX computes body states only in simulate; the adapter's own kinematics fills the
    gap, so they match the keyframe pose before the first step, and after a reset."""
    path = models.path("quadruped")
    model = mujoco.MjModel.from_xml_path(str(path))
    with isaacgym(path, num_envs=3, keyframe="stand") as sim:
        names = sim.layout.body_names
        bodies = sim.state()["body_states"]
        want = _fk(model, sim.qpos[0], names)
        for env in range(3):
            np.testing.assert_allclose(bodies[env, :, 0:3], want, atol=1e-4)
        np.testing.assert_allclose(np.linalg.norm(bodies[:, :, 3:7], axis=-1), 1.0, atol=1e-5)
        np.testing.assert_allclose(bodies[:, :, 7:13], 0.0, atol=1e-5)
        sim.step(np.zeros(sim.layout.nu), substeps=1)  # PhysX's own values now, one dt later
        np.testing.assert_allclose(sim.state()["body_states"][:, :, 0:3],
                                   np.broadcast_to(want, (3, *want.shape)), atol=2e-3)
        qpos = sim.qpos[[1]].copy()
        qpos[0, 0:3] = [0.3, -0.2, 1.5]
        sim.reset([1], qpos=qpos, qvel=np.zeros((1, sim.layout.nv)))
        np.testing.assert_allclose(sim.state()["body_states"][1, :, 0:3],
                                   _fk(model, qpos[0], names), atol=1e-4)


def test_variants_dof_readback_and_the_report(isaacgym: Open, tmp_path: Path) -> None:
    """Two fixed variants (a stiffer shoulder servo in the second): the report reads back
    each variant's DOF properties, and the stiffer envs settle faster."""
    stiff = tmp_path / "arm_stiff.xml"
    stiff.write_text(ARM.read_text().replace('kp="40"', 'kp="400"'))
    options = {"variants": [str(stiff)], "assignment": [0, 1, 0, 1]}
    with isaacgym(options=options) as sim:
        report = sim.report
        assert report["pipeline"] == "cpu" and report["sim"]["num_envs"] == 4
        assert report["sim"]["dt"] == pytest.approx(0.002)
        assert (report["sim"]["actors"], report["sim"]["dofs"]) == (4, 8)
        variants = report["variants"]
        assert [v["envs"] for v in variants] == [2, 2]
        for variant, kp in zip(variants, (40.0, 400.0), strict=True):
            shoulder = variant["dof_names"].index("shoulder")
            assert variant["dof"]["stiffness"][shoulder] == pytest.approx(kp)
            assert variant["dof"]["damping"][shoulder] == pytest.approx(4.0)
            assert variant["dof"]["armature"][shoulder] == pytest.approx(0.05)
            assert variant["dof"]["lower"][shoulder] == pytest.approx(-np.pi / 2)
            assert variant["bodies"]["mass"] == pytest.approx([5.0, 1.0, 0.5])
        sim.step(np.array([1.0, 0.0]), substeps=50)
        assert np.all(sim.qpos[[1, 3], 0] > sim.qpos[[0, 2], 0] + 0.05), sim.qpos[:, 0]


def test_selected_resets_touch_only_their_envs(isaacgym: Open) -> None:
    with isaacgym(models.path("quadruped"), num_envs=4, keyframe="stand") as sim:
        initial = sim.qpos.copy(), sim.state()["body_states"].copy()
        for _ in range(5):
            sim.step(np.full(sim.layout.nu, 0.5), substeps=4)
        moved = sim.qpos.copy(), sim.state()["body_states"].copy()
        sim.reset([0, 2])
        np.testing.assert_allclose(sim.qpos[[0, 2]], initial[0][[0, 2]], atol=1e-6)
        np.testing.assert_allclose(sim.state()["body_states"][[0, 2]], initial[1][[0, 2]],
                                   atol=1e-5)
        np.testing.assert_array_equal(sim.qpos[[1, 3]], moved[0][[1, 3]])
        np.testing.assert_array_equal(sim.state()["body_states"][[1, 3]], moved[1][[1, 3]])


# -- pool and device ----------------------------------------------------------------------

def test_default_split_and_a_report_from_every_worker(isaacgym: Open) -> None:
    """The CPU pipeline steps on one thread: one sim per core by default (the GPU pipeline's
    one sim per GPU is tests/test_split.py's); env indices stay global either way."""
    with isaacgym(num_envs=600) as sim:
        assert sim.split is not None
        assert len(sim.worker_pids) == sim.split.workers == min(split.cores(), 600 // 64 + 1)
        reports = [sim.report] if sim.split.workers == 1 else [
            w["report"] for w in sim.report["workers"]]
        assert sum(r["sim"]["num_envs"] for r in reports) == 600
    options = {"camera": {"envs": [3]}, "variants": [str(ARM)], "assignment": [0, 0, 1, 1]}
    with isaacgym(workers=2, options=options) as sim:
        workers = sim.report["workers"]
        assert [w["envs"] for w in workers] == [[0, 2], [2, 4]]
        assert [[v["envs"] for v in w["report"]["variants"]] for w in workers] == [[2, 0],
                                                                                   [0, 2]]
        sim.step()
        assert sim.capture(3, width=16, height=16).max() > 0
    with pytest.raises(RemoteError, match="pass workers=1"):
        isaacgym(workers=2, options={"viewer": True})


def test_backend_device_reaches_the_sim_on_shared_memory(isaacgym: Open) -> None:
    with isaacgym(device=1) as sim:
        assert sim.report["sim"]["device"] == 1
    with pytest.raises(RemoteError, match="option device is 0 but Backend\\(device=1\\)"):
        isaacgym(device=1, options={"device": 0})


# -- faults in the middle of a step -------------------------------------------------------

LONG = 10**7  # substeps: a step no test waits for


def _during_step(sim: unisim.Backend, act: Callable[[int], None]) -> threading.Timer:
    timer = threading.Timer(0.5, act, args=(sim.worker_pid,))
    timer.start()
    return timer


def test_a_crash_in_the_middle_of_a_step(isaacgym: Open, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A native crash inside simulate (SIGSEGV) is a WorkerDied naming the signal, with the
    worker's last Python frames (faulthandler) in the report; the backend is then dead, and
    the worker left no temporary files (the model, given as XML text, was written to one)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the worker's temporary folder
    with isaacgym(ARM.read_text(), timeout=60.0) as sim:
        timer = _during_step(sim, lambda pid: os.kill(pid, signal.SIGSEGV))
        with pytest.raises(WorkerDied) as died:  # found by the crash: the deadline is 60 s
            sim.step(substeps=LONG)
        timer.join()
        text = str(died.value)
        assert "SIGSEGV" in text or "-11" in text, text
        assert "isaacgym/sim.py" in text and "in step" in text, text
        with pytest.raises(unisim.BackendDead):
            sim.step()
    assert list(tmp_path.iterdir()) == []


def test_a_hang_in_the_middle_of_a_step(isaacgym: Open) -> None:
    """A worker that stops inside simulate is a WorkerTimeout after the step timeout, and is
    killed (the leak guard checks that no process is left)."""
    with isaacgym(timeout=2.0) as sim:
        timer = _during_step(sim, lambda pid: os.kill(pid, signal.SIGSTOP))
        with pytest.raises(WorkerTimeout, match=r"did not answer within 2 s"):
            sim.step(substeps=LONG)
        timer.join()
        with pytest.raises(unisim.BackendDead):
            sim.step()


# -- the viewer, headless ------------------------------------------------------------------

def test_the_viewer_path_in_the_sdks_order(isaacgym: Open, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Viewer after prepare_sim; each frame: closed? then step_graphics, draw_viewer; the
    user's close reaches the host as viewer_open = 0; destroy_viewer before destroy_sim."""
    trace = tmp_path / "trace"
    monkeypatch.setenv("ISAACGYM_FAKE_TRACE", str(trace))
    monkeypatch.setenv("ISAACGYM_FAKE_VIEWER_CLOSES_AFTER", "2")
    with isaacgym(options={"viewer": True}) as sim:
        assert sim.state()["viewer_open"].tolist() == [1, 1, 1, 1]
        sim.step()
        sim.step()
        assert sim.state()["viewer_open"].tolist() == [1, 1, 1, 1]
        sim.step()  # the window was closed after two frames
        assert sim.state()["viewer_open"].tolist() == [0, 0, 0, 0]
        sim.step()  # and the sim keeps stepping without it
    calls = trace.read_text().split()
    assert calls.index("prepare_sim") < calls.index("create_viewer")
    assert calls.index("create_viewer") < calls.index("viewer_camera_look_at") \
        < calls.index("simulate")
    frames = [i for i, call in enumerate(calls) if call == "draw_viewer"]
    assert len(frames) == 2
    for frame in frames:  # the CPU pipeline: no fetch_results before the graphics step
        assert calls[frame - 2:frame] == ["query_viewer_has_closed", "step_graphics"], calls
    assert calls.count("destroy_viewer") == 1
    assert calls.index("destroy_viewer") < calls.index("destroy_sim")
    assert calls[-1] == "destroy_sim"
