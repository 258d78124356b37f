"""The task bridge on the GPU pipeline: the CI ant on the SDK fake's CUDA tensors, its
outputs in CUDA memory shared with the worker (``data_plane="cuda"``).

The worker interpreter is this machine's Python with the fake on its path (on the GPU
machine: Python 3.12 with CUDA torch). Skipped, saying why, without an NVIDIA GPU and CUDA
torch (tools/gpu/gpu_run.sh runs it there).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from unisim.task_bridge import BridgedTask
from unisim.testing import isaacgym_fake_python

from .task_bridge_support import ANT, EXAMPLES, INPROCESS, ant_cfg
from .test_gpu import GPU_MISSING

pytestmark = [pytest.mark.skipif(GPU_MISSING is not None,
                                 reason=f"needs a CUDA GPU: {GPU_MISSING}"),
              pytest.mark.timeout(600)]


def test_the_ant_on_the_gpu_pipeline_steps_as_in_process(tmp_path: Path) -> None:
    fake = isaacgym_fake_python(sys.executable)
    actions = torch.rand(20, 16, 8, generator=torch.Generator().manual_seed(2)) * 2.0 - 1.0
    with BridgedTask(ANT, 16, style="vec_task", cfg=ant_cfg(episode_length=8),
                     paths=[EXAMPLES], python=fake, sim_device="cuda:0",
                     data_plane="cuda", timeout=300.0) as task:
        assert task.device == torch.device("cuda", 0)
        assert task.sim.report["task"]["device"] == "cuda:0"
        steps = [task.step(a.cuda()) for a in actions]
        assert all(s.observations.is_cuda and s.rewards.is_cuda for s in steps)
        lengths = task.episode_length_buf.cpu()
        done = steps[-1].done
        task.reset(done)  # the ant resets in its next step: these reset now
        assert bool((task.episode_length_buf.cpu()[done.cpu()] == 0).all())
        assert lengths.shape == (16,)
        (tmp_path / "options.json").write_text(json.dumps(task.options))
    np.save(tmp_path / "actions.npy", actions.numpy())
    subprocess.run([fake, str(INPROCESS), "rollout", str(tmp_path / "options.json"), "16",
                    str(tmp_path / "actions.npy"), str(tmp_path / "ref.npz")], check=True,
                   cwd=INPROCESS.parent)
    ref = np.load(tmp_path / "ref.npz")
    observations = np.stack([s.observations.cpu().numpy() for s in steps])
    np.testing.assert_allclose(observations, ref["obs"], rtol=0, atol=1e-5)
    done, time_outs = ref["done"], ref["time_outs"]
    assert np.array_equal(np.stack([s.terminated.cpu().numpy() for s in steps]),
                          done & ~time_outs)
    assert np.array_equal(np.stack([s.truncated.cpu().numpy() for s in steps]),
                          done & time_outs)
