"""Shared by the MJX tests: what is missing to run them, a compile cache, in-process MJX."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from unisim import models


def mjx_missing() -> str | None:
    """Why MJX cannot run in this interpreter (also the worker's), or None."""
    for module in ("jax", "mujoco.mjx"):
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return (f"{module} is not installed in {sys.executable} "
                    "(pip install 'unisim-bridge[gpu]')")
    return None


@pytest.fixture(scope="module")
def jax_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One persistent compile cache for this module's workers and in-process runs, and JAX
    taking GPU memory as needed (several processes share the GPU)."""
    with pytest.MonkeyPatch.context() as patch:
        if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
            patch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path_factory.mktemp("jax-cache")))
        patch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        yield


def in_process_rollout(model: str, num_envs: int, ctrls: np.ndarray) -> list[np.ndarray]:
    """qpos after each of ``ctrls`` (steps x envs x nu), MJX in this process, same step
    function as the worker's."""
    import jax
    import mujoco
    from mujoco import mjx

    from unisim_worker.engines.mjx import engine as mjx_engine
    mj_model = mujoco.MjModel.from_xml_path(models.resolve(model))
    device = jax.devices()[0]
    mx = mjx.put_model(mj_model, device=device, impl="jax")
    data: Any = mjx_engine.initial_data(mujoco, mjx, jax, mj_model, num_envs, device, None)
    step = mjx_engine.batched_step(jax, mjx)
    trajectory = []
    for ctrl in ctrls:
        data = step(mx, data, jax.device_put(ctrl, device), 1)
        trajectory.append(np.asarray(data.qpos))
    return trajectory


def fresh_process_spread(model: str, num_envs: int, ctrls: np.ndarray, runs: int = 3) -> float:
    """The largest difference between any two of ``runs`` in-process MJX rollouts, each in
    a fresh process: how far XLA on this machine lets identical runs drift apart (kernel
    choice and reduction order may differ between processes)."""
    with tempfile.TemporaryDirectory() as folder:
        np.save(f"{folder}/ctrls.npy", ctrls)
        script = ("import sys, numpy as np; from tests.mjx_support import in_process_rollout; "
                  "np.save(sys.argv[3], np.array(in_process_rollout(sys.argv[1], "
                  "int(sys.argv[2]), np.load(sys.argv[4]))))")
        outs = []
        for run in range(runs):
            out = f"{folder}/run{run}.npy"
            subprocess.run([sys.executable, "-c", script, model, str(num_envs), out,
                            f"{folder}/ctrls.npy"], check=True, timeout=600,
                           cwd=Path(__file__).resolve().parent.parent)
            outs.append(np.load(out))
    return max(float(np.max(np.abs(a - b))) for i, a in enumerate(outs) for b in outs[i + 1:])


def random_ctrls(steps: int, num_envs: int, nu: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.uniform(-1, 1, (steps, num_envs, nu)).astype(np.float32)


QUADRUPED = str(Path(models.path("quadruped")))
