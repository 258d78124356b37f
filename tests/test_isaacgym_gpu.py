"""The IsaacGym adapter on its GPU pipeline, over the SDK fake on CUDA tensors.

The worker interpreter is this machine's own Python (on the GPU machine: Python 3.12 with
CUDA torch; the worker code is version-agnostic) with the fake on its path. Covers what
the CPU runs in CI cannot: ``use_gpu_pipeline``, tensors on ``cuda:N``, ``fetch_results``
before graphics, and the CUDA data plane (``planes.DeviceSlots``). Skipped, saying
why, on machines without an NVIDIA GPU and CUDA torch (tools/gpu/gpu_run.sh runs it there).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import unisim
from unisim import models
from unisim.errors import RemoteError
from unisim.testing import isaacgym_fake_python

from .test_gpu import GPU_MISSING

CONFORMANCE = Path(__file__).resolve().parent / "conformance" / "models"
pytestmark = [pytest.mark.skipif(GPU_MISSING is not None,
                                 reason=f"needs a CUDA GPU: {GPU_MISSING}"),
              pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def fake() -> str:
    return isaacgym_fake_python(sys.executable)


def _open(fake: str, model: Any, num_envs: int = 4, **kwargs: Any) -> unisim.Backend:
    return unisim.Backend("isaacgym", model, num_envs, python=fake, progress=False,
                          init_timeout=300, **kwargs)


def _rollout(sim: unisim.Backend, steps: int) -> list[np.ndarray]:
    """qpos after each of ``steps`` steps of a fixed ctrl sequence, with a reset midway."""
    rng = np.random.default_rng(3)
    out = []
    for k in range(steps):
        sim.step(rng.uniform(-1, 1, (sim.num_envs, sim.layout.nu)), substeps=2)
        if k == steps // 2:
            sim.reset([1, 2])
        qpos = sim.qpos
        out.append(qpos.cpu().numpy().copy() if hasattr(qpos, "cpu") else qpos.copy())
    return out


def test_the_gpu_pipeline_equals_the_cpu_pipeline(fake: str) -> None:
    """Same model, controls and resets: the GPU pipeline (shm and CUDA planes) gives the
    CPU pipeline's trajectory; body states are valid before the first step on each."""
    quadruped = models.path("quadruped")
    runs = {}
    for name, kwargs in (("cpu", {"options": {"pipeline": "cpu"}}),
                         ("gpu-shm", {"options": {"pipeline": "gpu"}, "device": 0}),
                         ("gpu-cuda", {"data_plane": "cuda", "device": 0})):
        with _open(fake, quadruped, keyframe="stand", **kwargs) as sim:
            assert sim.report["sim"]["use_gpu_pipeline"] == (name != "cpu")
            bodies = sim.state()["body_states"]
            bodies = bodies.cpu().numpy() if hasattr(bodies, "cpu") else bodies
            assert np.isfinite(bodies).all() and bodies[:, 0, 2].min() > 0.2, name
            if name == "gpu-cuda":
                assert sim.qpos.is_cuda and sim.ctrl.is_cuda
            runs[name] = _rollout(sim, 20)
    for name in ("gpu-shm", "gpu-cuda"):
        np.testing.assert_allclose(np.array(runs[name]), np.array(runs["cpu"]), atol=1e-4,
                                   err_msg=name)


def test_capture_and_the_viewer_on_the_gpu_pipeline(fake: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """fetch_results comes before step_graphics on the GPU pipeline (the SDK's docs)."""
    trace = tmp_path / "trace"
    monkeypatch.setenv("ISAACGYM_FAKE_TRACE", str(trace))
    arm = CONFORMANCE / "arm.xml"
    with _open(fake, arm, data_plane="cuda", device=0,
               options={"viewer": True, "camera": {"distance": 1.0, "elevation": 35.0}}) as sim:
        sim.step(substeps=3)
        frame = sim.capture(2, width=64, height=48)
        assert frame.shape == (48, 64, 3) and frame.std() > 1.0
        assert sim.state()["viewer_open"].tolist() == [1, 1, 1, 1]
    calls = trace.read_text().split()
    draw = calls.index("draw_viewer")
    assert calls[draw - 3:draw] == ["query_viewer_has_closed", "fetch_results",
                                    "step_graphics"], calls
    render = calls.index("render_all_camera_sensors")
    assert calls[render - 2:render] == ["fetch_results", "step_graphics"], calls


def test_a_cuda_arena_on_another_gpu_than_option_device_is_refused(fake: str) -> None:
    with pytest.raises(RemoteError, match="option device is 1, but the CUDA arena"):
        _open(fake, CONFORMANCE / "arm.xml", data_plane="cuda", device=0,
              options={"device": 1})
