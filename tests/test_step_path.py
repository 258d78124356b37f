"""Which of unisim's files a step runs through (docs/architecture.md, "The path of a step").

A ``Backend.step`` on the defaults a user gets (no ``workers=``, no interval override, the
split chosen for 2 cores) is traced on both sides: the host with ``sys.setprofile`` in this
process, each worker in its own process (``UNISIM_TRACE_FILES``, ``unisim_worker.trace``).
The files counted are those of the three packages, by package: ``unisim/``,
``unisim_protocol/``, ``unisim_worker/``.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import unisim
import unisim_protocol
import unisim_worker
from unisim import split, stepping

PACKAGES = {Path(p.__file__).resolve().parent: p.__name__
            for p in (unisim, unisim_protocol, unisim_worker)}
# The default path's files (docs/architecture.md states them and their count).
DEFAULT_PATH = {"unisim/backend.py", "unisim/stepping.py", "unisim_protocol/doorbell.py",
                "unisim_worker/main.py", "unisim_worker/engines/mujoco/steppers.py"}
# Called out of a step only when a wait outlasts stepping.WORKER_CHECK_EVERY (a loaded machine)
SLOW_WAIT = {"unisim/process.py", "unisim/channel.py"}
PIPE = {"unisim/backend.py", "unisim/stepping.py", "unisim/pool.py", "unisim/channel.py",
        "unisim/watchdog.py", "unisim_protocol/messages.py", "unisim_protocol/codec.py",
        "unisim_protocol/framing.py"}
STEPS = 30


def package_file(filename: str) -> str | None:
    """``package/relative/path.py`` of a file of the three packages, else None."""
    path = Path(filename).resolve()
    for root, name in PACKAGES.items():
        if path.is_relative_to(root):
            return f"{name}/{path.relative_to(root).as_posix()}"
    return None


def traced(call: Callable[[], Any]) -> list[tuple[str, str]]:
    """(package file, function) of every Python function ``call()`` enters, in order."""
    seen: list[tuple[str, str]] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            seen.append((frame.f_code.co_filename, frame.f_code.co_name))

    gc.disable()  # a collection could run some other object's finaliser inside the trace
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
        gc.enable()
    files = {name: package_file(name) for name, _ in seen}
    return [(file, function) for name, function in seen
            if (file := files[name]) is not None]


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """This process, and so its workers, on 2 cores (these machines' size, whatever runs the
    test); the workers write their traces into the folder yielded."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("the default split of 2 cores needs 2 cores to run on")
    monkeypatch.setenv("UNISIM_TRACE_FILES", str(tmp_path))
    os.sched_setaffinity(0, cpus[:2])
    try:
        yield tmp_path
    finally:
        os.sched_setaffinity(0, cpus)


def worker_steps(folder: Path) -> list[list[set[str]]]:
    """For each worker, the package files of each STEP it served, from its trace file."""
    workers = []
    for trace in sorted(folder.glob("*.jsonl")):
        records = [json.loads(line) for line in trace.read_text().splitlines()]
        workers.append([{f for name in record["files"] if (f := package_file(name)) is not None}
                        for record in records if record["command"] == "STEP"])
    return workers


def default_step_files(python: str | None, folder: Path) -> tuple[split.Split, list[set[str]]]:
    """The split chosen and, for each of ``STEPS`` traced steps, the union of the files the
    host and every worker entered."""
    with unisim.Backend("mujoco", model="cartpole", num_envs=64, python=python,
                        progress=False) as sim:
        ctrl = np.full(sim.ctrl.shape, 0.5)
        for _ in range(5):  # the forecasts of the replies settle
            sim.step(ctrl)
        hosts = [{file for file, _ in traced(lambda: sim.step(ctrl))} for _ in range(STEPS)]
        chosen = sim.split
    workers = worker_steps(folder)  # complete once the workers have exited
    assert len(workers) == chosen.workers, (len(workers), chosen)
    assert all(len(steps) == 5 + STEPS for steps in workers), [len(s) for s in workers]
    return chosen, [host.union(*(steps[5 + k] for steps in workers))
                    for k, host in enumerate(hosts)]


def check_default_path(per_step: list[set[str]]) -> None:
    """Most steps cross exactly the default path's files; a slow wait adds only its own."""
    usual, _ = Counter(frozenset(files) for files in per_step).most_common(1)[0]
    assert usual == DEFAULT_PATH, sorted(usual)
    assert len(DEFAULT_PATH) == 5  # the count docs/architecture.md states
    for files in per_step:
        assert DEFAULT_PATH <= files <= DEFAULT_PATH | SLOW_WAIT, sorted(files)


def test_the_default_step_on_python38_crosses_five_files(two_cores: Path, py38: str) -> None:
    """MuJoCo 3.x on the 3.8 worker: one single-threaded worker per core, sharing rows."""
    chosen, per_step = default_step_files(py38, two_cores)
    assert (chosen.workers, chosen.shared) == (2, True), chosen
    check_default_path(per_step)


def test_the_default_step_on_the_hosts_python_crosses_five_files(two_cores: Path) -> None:
    """MuJoCo >= 4 on the host's interpreter: one worker stepping on threads of its own."""
    chosen, per_step = default_step_files(None, two_cores)
    assert (chosen.workers, chosen.threads, chosen.shared) == (1, 2, False), chosen
    check_default_path(per_step)


@pytest.fixture
def long_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host waiting longer than a slice for its reply checks on the worker between
    slices, a rare path that calls out; a loaded test machine could make any step that
    slow, so the slices are made longer than any step here."""
    monkeypatch.setattr(stepping, "WORKER_CHECK_EVERY", 10.0)


@pytest.mark.usefixtures("long_slices")
def test_a_pipe_step_runs_through_the_pool_the_channel_and_the_framing() -> None:
    with unisim.Backend("mujoco", model="cartpole", num_envs=4, workers=1, doorbell=False,
                        progress=False) as sim:
        ctrl = np.zeros(sim.ctrl.shape)
        sim.step(ctrl)
        calls = traced(lambda: sim.step(ctrl))
    assert {file for file, _ in calls} == PIPE, calls
