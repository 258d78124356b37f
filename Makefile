# One command each on a fresh machine: `make demo`, `make test`.
PYTHON ?= python3
PY38 ?= $(lastword $(wildcard $(shell pyenv root 2>/dev/null)/versions/3.8.*/bin/python))
VENV := .venv
VENV38 := .venv38
HOST := $(VENV)/bin/python
# Tools venv of the IsaacGym type gate: mypy 1.16 is the last to accept --python-version 3.8.
TYPECHECK := .venv-typecheck

# The source roots for an older Python than the host's (protocol/, worker/, ...): each says so
# in its pyproject's requires-python, and the lint reads it there.
OLDER_ROOTS = $(HOST) tools/python_roots.py --older-than 3.10

.PHONY: demo test fuzz lint ci clean gpu-stage bench bench-quick bench-profile bench-sweep

$(VENV)/.installed: pyproject.toml protocol/pyproject.toml worker/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(HOST) -m pip install -q --upgrade pip
	# torch first, pinned: the CPU build on these machines' disk (an unpinned one is GBs of CUDA)
	$(HOST) -m pip install -q torch==2.13.0
	# the shared core and the worker are packages of their own, installed editable beside it
	$(HOST) -m pip install -q -e ./protocol -e ./worker -e '.[dev]'
	touch $@

# The Python 3.8 worker env, when a 3.8 interpreter exists (pyenv's on these machines),
# with torch 1.13.1 for the IsaacGym SDK fake (about 2.7 GB of CUDA wheels; imports without a GPU).
$(VENV38)/.installed: envs/worker-mujoco38.txt envs/worker-torch38.txt
	@if [ -z "$(PY38)" ]; then echo "no Python 3.8 found: cross-interpreter tests will be skipped"; \
	else $(PY38) -m venv $(VENV38) && $(VENV38)/bin/python -m pip install -q --upgrade pip \
	  && $(VENV38)/bin/python -m pip install -q -r envs/worker-mujoco38.txt \
	    -r envs/worker-torch38.txt && touch $@; fi

$(TYPECHECK)/.installed:
	$(PYTHON) -m venv $(TYPECHECK)
	$(TYPECHECK)/bin/python -m pip install -q 'mypy==1.16.*'
	$(TYPECHECK)/bin/python -m pip install -q --pre --no-deps 'isaacgym-stubs==1.1rc4'
	touch $@

demo: $(VENV)/.installed $(VENV38)/.installed
	$(HOST) -m unisim demo

# In parallel, one process per core (pytest-xdist); a group that writes one file (the fault
# matrix) stays in one process.
TEST_ENV = UNISIM_PY38=$(if $(wildcard $(VENV38)/bin/python),$(abspath $(VENV38))/bin/python,) \
	MUJOCO_GL=$${MUJOCO_GL:-egl}
test: $(VENV)/.installed $(VENV38)/.installed $(TYPECHECK)/.installed
	$(TEST_ENV) $(HOST) -m pytest -n auto --dist loadgroup

# The property-based tests at 10,000 examples each (the suite runs 1,000).
fuzz: $(VENV)/.installed
	HYPOTHESIS_PROFILE=thorough $(HOST) -m pytest tests/test_wire_robustness.py

# The benchmarks are type-checked with their own extra (pyinstrument, gymnasium[mujoco]).
lint: $(VENV)/.bench $(VENV38)/.installed $(TYPECHECK)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy benchmarks --exclude '^benchmarks/py38/'
	$(OLDER_ROOTS) | while read root version; do \
	  $(VENV)/bin/vermin -q -t=$$version- --no-tips --eval-annotations --violations $$root || exit 1; \
	  if [ -x $(VENV38)/bin/python ] && $(VENV38)/bin/python -c "import sys; \
	    sys.exit(sys.version_info[:2] > tuple(map(int, '$$version'.split('.'))))"; then \
	    $(VENV38)/bin/python -m compileall -q $$root || exit 1; fi; \
	done
	$(TYPECHECK)/bin/python tools/typecheck/isaacgym_typecheck.py

# What CI runs: lint, the tests (cross-interpreter ones required), then the short soak,
# the check that docs/reliability.md lists every fault case the tests measured, the check
# that every figure block in README.md and docs/ equals its result file, and the
# benchmark suite in --quick mode so that it cannot rot (it asserts nothing about speed).
ci: lint
	UNISIM_REQUIRE_PY38=1 $(MAKE) test
	$(MAKE) fuzz
	$(HOST) tools/reliability/fault_matrix.py --check
	$(HOST) tools/figures/doc_figures.py --check
	$(HOST) tools/reliability/soak.py --quick
	$(MAKE) bench-quick

# Benchmarks (docs/benchmarks.md): the host venv with the `bench` extra, the 3.8 worker env,
# and EnvPool in a venv of its own; without EnvPool the suite reports its rows as n/a.
ENVPOOL_VENV := .venv-envpool
BENCH_ENV = UNISIM_PY38=$(if $(wildcard $(VENV38)/bin/python),$(abspath $(VENV38))/bin/python,)

$(VENV)/.bench: $(VENV)/.installed pyproject.toml
	$(HOST) -m pip install -q -e ./protocol -e ./worker -e '.[dev,bench]'
	touch $@

$(ENVPOOL_VENV)/.installed: envs/bench-envpool.txt
	$(PYTHON) -m venv $(ENVPOOL_VENV) && $(ENVPOOL_VENV)/bin/python -m pip install -q \
	  -r envs/bench-envpool.txt && touch $@ \
	  || echo "EnvPool did not install; the suite will show its rows as n/a"

bench: $(VENV)/.bench $(VENV38)/.installed $(ENVPOOL_VENV)/.installed
	$(BENCH_ENV) $(HOST) -m benchmarks.throughput.suite --name throughput-2core

# CI's short run skips EnvPool (a 1 GB venv): its rows read n/a there.
bench-quick: $(VENV)/.bench $(VENV38)/.installed
	$(BENCH_ENV) $(HOST) -m benchmarks.throughput.suite --quick
	$(BENCH_ENV) $(HOST) -m benchmarks.split.sweep --quick --memory-engines mujoco,mock
	$(BENCH_ENV) $(HOST) -m benchmarks.split.chunk_plans --quick
	$(HOST) -m benchmarks.latency.profile_step --steps 500 --worker-envs 256 --worker-steps 20
	$(HOST) -m benchmarks.latency.idle_cpu --quick

# The split sweep (docs/benchmarks.md, "The split"): N x workers x threads, here.
bench-sweep: $(VENV)/.bench $(VENV38)/.installed
	$(BENCH_ENV) $(HOST) -m benchmarks.split.sweep --name split-2core

bench-profile: $(VENV)/.bench
	$(HOST) -m benchmarks.latency.profile_step --name step-profile

# Stage the GPU run (tools/gpu/gpu_run.sh) in GPU_STAGE for a GPU machine without network:
# unisim's wheel, the cp312 wheels MJX needs there, the tests and the benchmark, and the SDK
# fake of fa97e1a, the baseline of the fake's threads benchmark (it has no git history there).
GPU_STAGE ?= .gpu-run
GPU_WHEELS := mujoco==4.0.0 mujoco-core==4.0.0 mujoco-studio==4.0.0 mujoco-mjx==3.17.0 \
	trimesh glfw pyopengl websockets
gpu-stage: $(VENV)/.installed
	rm -rf $(GPU_STAGE)/tests $(GPU_STAGE)/benchmarks $(GPU_STAGE)/tools $(GPU_STAGE)/examples \
	  $(GPU_STAGE)/wheels/unisim_* $(GPU_STAGE)/baseline-fake
	mkdir -p $(GPU_STAGE)/wheels
	$(HOST) -m pip wheel -q --no-deps -w $(GPU_STAGE)/wheels ./protocol ./worker .
	$(HOST) -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
	  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
	  --platform manylinux1_x86_64 -d $(GPU_STAGE)/wheels $(GPU_WHEELS)
	cp -r tests benchmarks tools examples pyproject.toml tools/gpu/gpu_run.sh $(GPU_STAGE)/
	mkdir -p $(GPU_STAGE)/baseline-fake
	git archive fa97e1a unisim/isaacgym_fake | tar -x -C $(GPU_STAGE)/baseline-fake
	# The EGL/Vulkan loaders a bare GPU machine lacks (the IsaacGym fake's cameras render there).
	mkdir -p $(GPU_STAGE)/gl /tmp/unisim-apt/partial
	apt-get -oAPT::Architecture=amd64 -oDir::State::Lists=/tmp/unisim-apt update -qq
	cd $(GPU_STAGE)/gl && apt-get -oAPT::Architecture=amd64 -oDir::State::Lists=/tmp/unisim-apt \
	  download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2

clean:
	rm -rf $(VENV) $(VENV38) $(TYPECHECK) $(ENVPOOL_VENV) build dist *.egg-info */src/*.egg-info
