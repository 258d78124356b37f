"""Frame capture from the physics worker against in-process ``mujoco.Renderer``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")  # before mujoco is imported, here or in a worker

import numpy as np
import pytest

import unisim
from unisim import models

from . import render_reference

QUADRUPED = str(models.path("quadruped"))
REFERENCE_SCRIPT = Path(render_reference.__file__)


def _moved_sim(python: str | None = None, workers: int = 1) -> unisim.Backend:
    """Three quadrupeds driven apart by different controls."""
    sim = unisim.Backend("mujoco", model="quadruped", num_envs=3, keyframe="stand",
                         python=python, workers=workers, progress=False)
    ctrl = np.random.default_rng(3).uniform(-1, 1, size=(3, sim.layout.nu))
    for _ in range(15):
        sim.step(ctrl, substeps=4)
    return sim


def _shm_names() -> set[str]:
    return {p.name for p in Path("/dev/shm").glob("unisim-*")}


@pytest.mark.parametrize(("camera", "workers"), [("track", 1), (None, 1), ("track", 3)])
def test_capture_equals_in_process_renderer(camera: str | None, workers: int) -> None:
    with _moved_sim(workers=workers) as sim:  # with 3 workers, each env on its own
        frames = [sim.capture(env, camera=camera, width=96, height=72) for env in range(3)]
        qpos = sim.qpos.copy()
    reference, _ = render_reference.render(QUADRUPED, qpos, camera, 96, 72)
    for env, frame in enumerate(frames):
        assert frame.shape == (72, 96, 3) and frame.dtype == np.uint8
        assert np.array_equal(frame, reference[env]), f"env {env} differs from the reference"
    assert not np.array_equal(frames[0], frames[1])  # each env's own state was drawn


def test_capture_grows_its_slot_and_names_nothing_while_running() -> None:
    before = _shm_names()
    with _moved_sim() as sim:
        small = sim.capture(0, camera="track", width=32, height=24)
        large = sim.capture(0, camera="track", width=200, height=150)
        again = sim.capture(0, camera="track", width=32, height=24)
        assert _shm_names() <= before  # every slot unlinked once the worker mapped it
        qpos = sim.qpos[:1].copy()
    assert np.array_equal(small, again)
    assert np.array_equal(large, render_reference.render(QUADRUPED, qpos, "track", 200, 150)[0][0])


def test_python38_capture_equals_renderer_of_its_interpreter(py38: str, tmp_path: Path) -> None:
    with _moved_sim(py38) as sim:
        assert sim.worker_info["python"].startswith("3.8.")
        frames = np.array([sim.capture(env, camera="track", width=80, height=60)
                           for env in range(3)])
        np.save(tmp_path / "qpos.npy", sim.qpos)
    out = tmp_path / "reference.npz"
    subprocess.run([py38, str(REFERENCE_SCRIPT), QUADRUPED, str(tmp_path / "qpos.npy"), "track",
                    "80", "60", str(out)], check=True, env={**os.environ, "MUJOCO_GL": "egl"})
    reference = np.load(out)
    assert str(reference["version"]).startswith("3.2")
    assert np.array_equal(frames, reference["rgb"])


def test_capture_errors_are_clear_and_leave_the_backend_usable() -> None:
    with _moved_sim() as sim:
        with pytest.raises(unisim.RemoteError, match="no camera 'nope'; its cameras: track"):
            sim.capture(0, camera="nope")
        with pytest.raises(ValueError, match=r"image width must be an int in \[1, 8192\]"):
            sim.capture(0, width=100_000, height=10)
        with pytest.raises(ValueError, match="image height"):
            sim.capture(0, height=0)
        with pytest.raises(IndexError, match=r"env_ids must lie in \[0, 3\)"):
            sim.capture(3)
        with pytest.raises(TypeError, match="camera must be"):
            sim.capture(0, camera=1.5)  # type: ignore[arg-type]
        assert sim.capture(0, width=16, height=16).shape == (16, 16, 3)


def test_mock_engine_refuses_capture() -> None:
    with unisim.Backend("mock", num_envs=1, progress=False) as sim, \
            pytest.raises(unisim.RemoteError, match="cannot render"):
        sim.capture()


def test_closed_backend_refuses_capture() -> None:
    sim = unisim.Backend("mujoco", model="cartpole", num_envs=1, progress=False)
    sim.close()
    with pytest.raises(unisim.BackendDead, match="closed"):
        sim.capture()


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_video_recorder_writes_the_captured_frames(tmp_path: Path, suffix: str) -> None:
    imageio = pytest.importorskip("imageio.v3", reason="the video extra (imageio) is required")
    from unisim.video import VideoRecorder

    path = tmp_path / f"clip{suffix}"
    with _moved_sim() as sim, VideoRecorder(path, sim, camera="track", width=64, height=48,
                                            fps=10) as video:
        for _ in range(6):
            sim.step(substeps=5)
            video.capture()
    frames = imageio.imread(path, index=None)
    assert frames.shape[:3] == (6, 48, 64)
    if suffix == ".gif":  # lossless palette of few colours: close to the captured frames
        assert not np.array_equal(frames[0], frames[-1])


def test_video_recorder_rejects_bad_input(tmp_path: Path) -> None:
    pytest.importorskip("imageio", reason="the video extra (imageio) is required")
    from unisim.video import VideoRecorder

    with pytest.raises(ValueError, match=r"must end in \.mp4 or \.gif"):
        VideoRecorder(tmp_path / "clip.avi")
    video = VideoRecorder(tmp_path / "clip.mp4")
    with pytest.raises(ValueError, match="no backend"):
        video.capture()
    with pytest.raises(ValueError, match=r"\(H, W, 3\) uint8"):
        video.add(np.zeros((4, 4), np.uint8))
    video.add(np.zeros((5, 5, 3), np.uint8))
    with pytest.raises(ValueError, match="even width and height"):
        video.close()
