# One command each on a fresh machine: `make demo`, `make test`.
PYTHON ?= python3
PY38 ?= $(lastword $(wildcard $(shell pyenv root 2>/dev/null)/versions/3.8.*/bin/python))
VENV := .venv
VENV38 := .venv38
HOST := $(VENV)/bin/python
# Tools venv of the IsaacGym type gate: mypy 1.16 is the last to accept --python-version 3.8.
TYPECHECK := .venv-typecheck

.PHONY: demo test lint ci clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(HOST) -m pip install -q --upgrade pip
	# torch first, pinned: the CPU build on these machines' disk (an unpinned one is GBs of CUDA)
	$(HOST) -m pip install -q torch==2.13.0
	$(HOST) -m pip install -q -e '.[dev]'
	touch $@

# The Python 3.8 worker env, when a 3.8 interpreter exists (pyenv's on these machines).
$(VENV38)/.installed: envs/worker-mujoco38.txt
	@if [ -z "$(PY38)" ]; then echo "no Python 3.8 found: cross-interpreter tests will be skipped"; \
	else $(PY38) -m venv $(VENV38) && $(VENV38)/bin/python -m pip install -q --upgrade pip \
	  && $(VENV38)/bin/python -m pip install -q -r envs/worker-mujoco38.txt && touch $@; fi

$(TYPECHECK)/.installed:
	$(PYTHON) -m venv $(TYPECHECK)
	$(TYPECHECK)/bin/python -m pip install -q 'mypy==1.16.*'
	$(TYPECHECK)/bin/python -m pip install -q --pre --no-deps 'isaacgym-stubs==1.1rc4'
	touch $@

demo: $(VENV)/.installed
	$(HOST) -m unisim demo

test: $(VENV)/.installed $(VENV38)/.installed $(TYPECHECK)/.installed
	UNISIM_PY38=$(if $(wildcard $(VENV38)/bin/python),$(abspath $(VENV38))/bin/python,) \
	  MUJOCO_GL=$${MUJOCO_GL:-egl} $(HOST) -m pytest

lint: $(VENV)/.installed $(VENV38)/.installed $(TYPECHECK)/.installed
	$(VENV)/bin/ruff check unisim tests
	$(VENV)/bin/ruff check --target-version py38 --ignore UP031,UP032 worker protocol
	$(VENV)/bin/mypy
	$(VENV)/bin/vermin -q -t=3.8- --no-tips --eval-annotations --violations worker protocol
	@if [ -x $(VENV38)/bin/python ]; then $(VENV38)/bin/python -m compileall -q worker protocol; fi
	$(TYPECHECK)/bin/python scripts/isaacgym_typecheck.py

# What CI runs: lint, then the tests with the cross-interpreter ones required.
ci: lint
	UNISIM_REQUIRE_PY38=1 $(MAKE) test

clean:
	rm -rf $(VENV) $(VENV38) $(TYPECHECK) .typings build dist *.egg-info
