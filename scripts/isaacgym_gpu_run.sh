#!/usr/bin/env bash
# The IsaacGym adapter's GPU pipeline over the SDK fake on CUDA tensors, in one command on a
# GPU machine without network (docs/isaacgym.md, "Run on the GPU machine"). The worker
# interpreter is that machine's own python3 (CUDA torch) with the fake on its path. Run from
# a folder holding wheels/ (unisim's wheel, and MuJoCo with its GL helpers for this python),
# tests/ and pyproject.toml; the log goes to $OUT/isaacgym-gpu.log.
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-$PWD/out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 MUJOCO_GL=egl UNISIM_CACHE_DIR=/tmp/unisim-cache
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir wheels/*.whl || exit 1
{
  echo "\$ $0"
  nvidia-smi -L
  python3 -c 'import sys, numpy, torch, mujoco; print("python", sys.version.split()[0],
    "numpy", numpy.__version__, "torch", torch.__version__, torch.cuda.is_available(),
    "mujoco", mujoco.__version__)'
  timeout "${TESTS_LIMIT:-300}" python3 -m pytest -v -p no:cacheprovider -rs \
    tests/test_isaacgym_gpu.py
} 2>&1 | tee "$out/isaacgym-gpu.log"
