#!/usr/bin/env bash
# The GPU run, in one command on a GPU machine: the tests that need a GPU, then the GPU data
# plane benchmark, the task bridge's on the GPU and CPU pipelines (their control, where a
# step's time goes, the GPU pipeline under MPS), the GPU's hand-over between processes and
# the SDK fake's threads.
# Runs from a folder staged by
# `make gpu-stage` (wheels/ holding unisim's wheel and MJX's, tests/, benchmarks/, tools/,
# examples/ (the CI's IsaacGym tasks), pyproject.toml; gl/ with the EGL loader packages a
# bare machine lacks, for the IsaacGym fake's cameras; baseline-fake/ with fa97e1a's SDK
# fake, the fake threads benchmark's baseline), with no network: it installs the
# wheels into this python3 (so the workers it spawns see them too; the IsaacGym tests use
# that python3, with CUDA torch, as the worker of the SDK fake). Logs go to $OUT, with
# gpu-tests.xml and gpu-benchmark.json, which `python -m benchmarks.gpu.data_plane --publish`
# turns into the docs' figure block (raw logs stay out of docs/).
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-$PWD/out}
mkdir -p "$out"
# PARTS="phases mps" runs only those parts (one device call has a time limit
# of its own); unset, every part.
parts=" tests data-plane bridge control phases mps handover fake-threads "
for part in ${PARTS:-}; do
  [[ $parts == *" $part "* ]] || { echo "gpu_run.sh: no part '$part' (PARTS); the parts:$parts" >&2; exit 2; }
done
want() { [ -z "${PARTS:-}" ] || [[ " $PARTS " == *" $1 "* ]]; }
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export JAX_COMPILATION_CACHE_DIR=${JAX_COMPILATION_CACHE_DIR:-/tmp/unisim-jax-cache}
export MUJOCO_GL=egl UNISIM_CACHE_DIR=/tmp/unisim-cache
if [ -d gl ]; then for f in gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
export __EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir wheels/*.whl || exit 1
# The kernel's release names the machine's sandbox (Firecracker's "-fc-", gVisor's 4.4.0): the
# same benchmark's step took 13 ms on one H100 host and 9 ms on another, so say which ran.
{ uname -r; nvidia-smi -L; python3 -c 'import jax, torch; print("jax", jax.__version__, jax.devices(),
  "torch", torch.__version__, torch.cuda.is_available())'; } 2>&1 | tee "$out/gpu-env.log"
status=0
# Each phase has a time limit, so that one hang leaves the other's output.
if want tests; then
  timeout "${TESTS_LIMIT:-240}" python3 -m pytest -q -p no:cacheprovider -rs --durations=8 \
    --junitxml="$out/gpu-tests.xml" -o junit_logging=system-out tests/test_cuda_ipc.py tests/test_gpu.py tests/test_mjx.py \
    tests/test_isaacgym_gpu.py tests/test_task_bridge_gpu.py 2>&1 | tee "$out/gpu-tests.log" \
    || status=1
fi
if want data-plane; then
  timeout "${BENCH_LIMIT:-330}" python3 -m benchmarks.gpu.data_plane --json "$out/gpu-benchmark.json" "$@" 2>&1 \
    | tee "$out/gpu-benchmark.log" || status=1
fi
# The task bridge on the GPU pipeline (the CI ant on the SDK fake, its tensors on CUDA), then
# on the CPU pipeline with this machine's cores. `--saved FILE --name task-bridge-gpu
# --publish` (and task-bridge-16core) writes each into docs/benchmarks.md. Ten steps a turn:
# there a 16-core step varies from round to round by more than the bridge costs, and a
# median of 30 rounds of 3 steps moved by a few hundredths between runs. Three pairs of
# processes, 20 rounds each (`pairs`): on an H100, two bridged processes started alike in one
# run differed by about as much as the 5% goal. The phases part measures one pair (`turns`).
turns=(--steps 10 --rounds 60)
pairs=(--steps 10 --rounds 20 --pairs 3)
if want bridge; then
  timeout "${BRIDGE_LIMIT:-360}" python3 -m benchmarks.throughput.task_bridge --python python3 \
    "${pairs[@]}" --sim-device cuda:0 --sizes 1024 4096 --json "$out/task-bridge-gpu.json" 2>&1 \
    | tee "$out/task-bridge-gpu.log" || status=1
  timeout "${BRIDGE_LIMIT:-360}" python3 -m benchmarks.throughput.task_bridge --python python3 \
    "${pairs[@]}" --sizes 64 1024 4096 --json "$out/task-bridge-16core.json" 2>&1 \
    | tee "$out/task-bridge-16core.log" || status=1
fi
# The same on both pipelines with a second in-process task in the bridge's place: how far
# apart two identical processes land there, the floor under the ratios above.
if want control; then
  for pipeline in gpu 16core; do
    device=(); [ $pipeline = gpu ] && device=(--sim-device cuda:0)
    timeout "${BRIDGE_LIMIT:-360}" python3 -m benchmarks.throughput.task_bridge --python python3 \
      --control "${pairs[@]}" "${device[@]}" --sizes 1024 4096 \
      --json "$out/task-bridge-control-$pipeline.json" 2>&1 \
      | tee "$out/task-bridge-control-$pipeline.log" || status=1
  done
fi
# Where a bridged step's time goes on each pipeline, part by part, beside the in-process step
# (`--saved FILE --name task-bridge-phases-gpu --publish`, and -16core).
if want phases; then
  for pipeline in gpu 16core; do
    device=(); [ $pipeline = gpu ] && device=(--sim-device cuda:0)
    timeout "${BRIDGE_LIMIT:-240}" python3 -m benchmarks.latency.task_bridge_phases --python python3 \
      "${turns[@]}" "${device[@]}" --json "$out/task-bridge-phases-$pipeline.json" 2>&1 \
      | tee "$out/task-bridge-phases-$pipeline.log" || status=1
  done
fi
# The GPU pipeline again with every process a client of one MPS server (NVIDIA's
# Multi-Process Service: one set of scheduling resources for all clients, no swap between
# their contexts), started for this run alone in a folder of its own and stopped after
# (`--saved FILE --name task-bridge-gpu-mps --publish`).
if want mps; then
  if command -v nvidia-cuda-mps-control >/dev/null; then
    mps=$(mktemp -d)
    export CUDA_MPS_PIPE_DIRECTORY=$mps CUDA_MPS_LOG_DIRECTORY=$mps
    if nvidia-cuda-mps-control -d; then
      trap 'echo quit | nvidia-cuda-mps-control' EXIT  # stopped even if this run is cut short
      timeout "${BRIDGE_LIMIT:-360}" python3 -m benchmarks.throughput.task_bridge --python python3 \
        "${pairs[@]}" --sim-device cuda:0 --sizes 1024 --json "$out/task-bridge-gpu-mps.json" 2>&1 \
        | tee "$out/task-bridge-gpu-mps.log" || status=1
      echo quit | nvidia-cuda-mps-control
      trap - EXIT
    else
      echo "gpu_run.sh: part mps: nvidia-cuda-mps-control -d failed (log: $mps)" >&2; status=1
    fi
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  else
    echo "gpu_run.sh: part mps skipped: no nvidia-cuda-mps-control on PATH (it comes with" \
      "the NVIDIA driver's utilities)" >&2
  fi
fi
# What the GPU charges each time the two processes take turns on it, twice a bridged step on
# the GPU pipeline (`--saved FILE --name gpu-handover --publish`).
if want handover; then
  timeout "${HANDOVER_LIMIT:-120}" python3 -m benchmarks.gpu.handover --json "$out/gpu-handover.json" \
    2>&1 | tee "$out/gpu-handover.log" || status=1
fi
# The SDK fake on one thread and on this machine's cores, against fa97e1a's fake where `make
# gpu-stage` staged it (`--saved FILE --name isaacgym-fake-threads-16core --publish`).
if want fake-threads; then
  baseline=()
  [ -d baseline-fake/unisim/isaacgym_fake ] && baseline=(--baseline baseline-fake/unisim/isaacgym_fake --baseline-name fa97e1a)
  timeout "${FAKE_LIMIT:-300}" python3 -m benchmarks.isaacgym_fake.threads --python python3 \
    "${baseline[@]}" --json "$out/isaacgym-fake-threads-16core.json" 2>&1 \
    | tee "$out/isaacgym-fake-threads-16core.log" || status=1
fi
exit $status
