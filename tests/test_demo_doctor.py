"""``python -m unisim demo`` walks the shipped policy; ``doctor`` starts real workers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from unisim import split
from unisim.demo import policy_path
from unisim.policy import MlpPolicy


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "unisim", *args], capture_output=True,
                          text=True, timeout=300, check=False, cwd=cwd,
                          env={**os.environ, **(env or {})})


def test_the_shipped_policy_is_small_and_acts() -> None:
    path = policy_path()
    assert path.stat().st_size < 300_000
    policy = MlpPolicy(path)
    assert (policy.num_observations, policy.num_actions) == (36, 8)
    actions = policy(np.zeros((5, 36)))
    assert actions.shape == (5, 8) and np.isfinite(actions).all()


def test_demo_walks_on_the_python38_worker_and_names_its_video(py38: str, tmp_path: Path) -> None:
    video = tmp_path / "walk.gif"
    result = run_cli("demo", "--num-envs", "32", "--steps", "150", "--video", str(video),
                     env={"UNISIM_PY38": py38})
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert f"worker on Python 3.8 at {py38}" in out
    workers = min(32 // split.MIN_ROWS_PER_WORKER, split.cores())  # MuJoCo 3.2: one thread
    named = (r"pid \d+" if workers == 1 else
             rf"{workers} processes \(the default split\), pids \d+(, \d+){{{workers - 1}}}")
    assert re.search(r"workers?: Python 3\.8\.\d+ \(numpy 1\.\d+\.\d+\), " + named + "\n",
                     out), out
    distance = float(re.search(r"mean distance (-?[\d.]+) m forward", out).group(1))
    assert distance > 1.0, out  # 3 s of walking
    assert re.search(r"worker on Python 3\.8\.\d+, MuJoCo 3\.2\.\d+ \(loop\) +[\d,]+  "
                     r"[\d.]+x in-process", out), out
    host = rf"worker on Python {sys.version_info[0]}\.{sys.version_info[1]}\.\d+, MuJoCo "
    assert re.search(host + r"[\d.]+ \(\w+\) +[\d,]+  [\d.]+x in-process; bitwise the same "
                     r"state", out), out
    assert re.search(r"in-process, Python [\d.]+, MuJoCo [\d.]+ \(\w+\) +[\d,]+\n", out)
    assert f"video of env 0: {video}" in out and video.stat().st_size > 10_000


def test_doctor_starts_a_worker_per_interpreter_and_names_each_fix(py38: str,
                                                                   tmp_path: Path) -> None:
    bogus = tmp_path / "python"
    bogus.write_text("#!/bin/sh\nexit 3\n")
    bogus.chmod(0o755)
    result = run_cli("doctor", "--steps", "20", cwd=tmp_path,
                     env={"UNISIM_PY38": py38, "UNISIM_WORKER_PYTHON": str(bogus)})
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    ok = re.findall(r"OK: worker started in [\d.]+ s; 20 steps of 16 cartpoles in \d+ ms", out)
    assert len(ok) == 2, out  # this interpreter and the 3.8 one
    assert "python 3.8." in out
    assert f"[$UNISIM_WORKER_PYTHON] {bogus}" in out
    assert re.search(r"cannot run it .*\n +fix: point UNISIM_WORKER_PYTHON", out), out
    for heading in ("rendering", "GPUs", "CUDA data plane", "/dev/shm:", "isaacgym worker"):
        assert heading in out
    assert re.search(r"(egl|osmesa) +(renders|FAILED)", out)
