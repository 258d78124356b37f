"""GPU data plane benchmark: MJX in-process vs MJX behind unisim, side by side in one run.

For each N: MJX stepped in this process (the worker's own jitted step function), MJX in a
unisim worker with the CUDA IPC data plane (torch CUDA tensors, no host copy), and MJX in a
unisim worker with host shared memory (a host round trip each step). Then MuJoCo's CPU
``mujoco.batch`` at N=4,096, in-process (ctrl set once) and behind unisim (ctrl written and
state copied to the slots every step). Modes alternate in rounds, each round starting with
the next mode; the median round is reported, and each ratio is the median of the rounds'
paired ratios.
Throughput: env-steps/s over a run of back-to-back steps, synchronised at the end.
Latency: one step including synchronisation, median.

    python -m benchmarks.gpu.data_plane [--sizes 1024 4096 16384] [--steps 100] [--rounds 5]
                                        [--json FILE]
    python -m benchmarks.gpu.data_plane --publish FILE.json --tests JUNIT.xml --name NAME

``--json`` keeps every figure (written after each N, so a run cut short keeps what it
measured); ``--publish`` writes a saved run and the GPU test suite's outcome (pytest's
``--junitxml``, as ``tools/gpu/gpu_run.sh`` writes them) as the block ``figures:NAME`` of the
docs with its result file (tools/figures/doc_figures.py).

Needs an NVIDIA GPU, torch with CUDA, and JAX with CUDA plus mujoco-mjx in this interpreter.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import unisim
from unisim import models

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # host and workers share one GPU
MODEL = "quadruped"


class Mode:
    """One way of stepping N envs: ``step()`` enqueues one step, ``sync()`` waits for it."""

    name = ""

    def step(self) -> None:
        raise NotImplementedError

    def sync(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the mode holds."""


class InProcess(Mode):
    name = "MJX in-process"

    def __init__(self, num_envs: int, ctrl: np.ndarray) -> None:
        import jax  # type: ignore[import-not-found, unused-ignore]  # on the GPU machine
        import mujoco
        from mujoco import mjx

        from unisim_worker.engines.mjx import engine as mjx_engine

        model = mujoco.MjModel.from_xml_path(models.resolve(MODEL))
        device = jax.devices()[0]
        self.model = mjx.put_model(model, device=device, impl="jax")
        self.data = mjx_engine.initial_data(mujoco, mjx, jax, model, num_envs, device, None)
        self.fn = mjx_engine.batched_step(jax, mjx)
        self.ctrl = jax.device_put(ctrl, device)

    def step(self) -> None:
        self.data = self.fn(self.model, self.data, self.ctrl, 1)

    def sync(self) -> None:
        self.data.qpos.block_until_ready()


class Behind(Mode):
    """A unisim backend; ``ctrl`` is handed to every step, as a training loop would."""

    def __init__(self, engine: str, num_envs: int, ctrl: Any, plane: str, name: str,
                 sync: Callable[[], None] = lambda: None) -> None:
        self.name = name
        self.sim = unisim.Backend(engine, MODEL, num_envs=num_envs, data_plane=plane,
                                  device=0 if engine == "mjx" else None, init_timeout=600,
                                  progress=False)
        self.ctrl = ctrl
        self._sync = sync

    def step(self) -> None:
        self.sim.step(self.ctrl)

    def sync(self) -> None:
        self._sync()

    def close(self) -> None:
        self.sim.close()


class CpuBatch(Mode):
    name = "MuJoCo CPU mujoco.batch in-process"

    def __init__(self, num_envs: int, ctrl: np.ndarray) -> None:
        import mujoco
        import mujoco.batch

        model = mujoco.MjModel.from_xml_path(models.resolve(MODEL))
        self.batch = mujoco.batch.Batch(model, nsim=num_envs, nthread=os.cpu_count() or 1)
        self.batch.bind("ctrl")[:] = ctrl
        self.threads = os.cpu_count()

    def step(self) -> None:
        self.batch.step(nstep=1)

    def sync(self) -> None:
        """``step`` returns when the threads are done."""


def mjx_modes(num_envs: int, ctrl: np.ndarray, torch: Any) -> list[Callable[[], Mode]]:
    return [
        lambda: InProcess(num_envs, ctrl),
        lambda: Behind("mjx", num_envs, torch.from_numpy(ctrl).cuda(), "cuda",
                       "MJX behind unisim, CUDA IPC plane", torch.cuda.synchronize),
        lambda: Behind("mjx", num_envs, ctrl, "shm", "MJX behind unisim, host shm plane"),
    ]


def build(factories: list[Callable[[], Mode]]) -> list[Mode]:
    """The modes that could be set up; each failure is printed and the run goes on."""
    modes = []
    for factory in factories:
        try:
            modes.append(factory())
        except Exception:
            print("  a mode failed to set up:\n" + traceback.format_exc(), flush=True)
    return modes


def measure(mode: Mode, num_envs: int, steps: int) -> tuple[float, float]:
    """(env-steps/s over ``steps`` back-to-back steps, median latency of one step in ms)."""
    mode.sync()
    start = time.perf_counter()
    for _ in range(steps):
        mode.step()
    mode.sync()
    rate = num_envs * steps / (time.perf_counter() - start)
    latencies = []
    for _ in range(max(5, steps // 5)):
        start = time.perf_counter()
        mode.step()
        mode.sync()
        latencies.append(time.perf_counter() - start)
    return rate, statistics.median(latencies) * 1e3


def compare(modes: list[Mode], num_envs: int, steps: int,
            rounds: int) -> list[tuple[str, float, float, float]]:
    """(name, env-steps/s, step latency in ms, ratio to the first mode) per mode: medians over
    the rounds, the ratio paired within each round (the machine's speed drifts between them)."""
    for mode in list(modes):  # warm up: caches, allocators, clocks
        try:
            for _ in range(3):
                mode.step()
            mode.sync()
        except Exception:
            print(f"  {mode.name} failed:\n{traceback.format_exc()}", flush=True)
            modes.remove(mode)
    results: dict[str, list[tuple[float, float]]] = {m.name: [] for m in modes}
    for round_ in range(rounds):  # each round starts with the next mode: no mode always first
        start = round_ % len(modes)
        for mode in modes[start:] + modes[:start]:
            results[mode.name].append(measure(mode, num_envs, steps))
    base = [rate for rate, _ in results[modes[0].name]] if modes else []
    rows = []
    for mode in modes:
        rates = [r for r, _ in results[mode.name]]
        lat = [m for _, m in results[mode.name]]
        ratio = statistics.median(r / b for r, b in zip(rates, base, strict=True))
        rows.append((mode.name, statistics.median(rates), statistics.median(lat), ratio))
    return rows


def table(rows: list[tuple[int, str, float, float, float | None]]) -> str:
    lines = ["| N | mode | env-steps/s | step latency (ms) | vs MJX in-process |",
             "| ---: | --- | ---: | ---: | ---: |"]
    for num_envs, name, rate, latency, ratio in rows:
        shown = "" if ratio is None else f"{ratio:.2f}x"
        lines.append(f"| {num_envs:,} | {name} | {rate:,.0f} | {latency:.2f} | {shown} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096, 16384])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cpu-envs", type=int, default=4096)
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--publish", help="publish a saved --json run (with --tests, --name)")
    parser.add_argument("--tests", help="pytest --junitxml file of the GPU suite's run")
    parser.add_argument("--name", default="gpu-run")
    args = parser.parse_args()
    if args.publish:
        return publish_run(args.publish, args.tests, args.name)
    logging.basicConfig(format="%(name)s: %(message)s")
    logging.getLogger("unisim_worker").setLevel(logging.INFO)  # workers' stderr, fallbacks too

    import jax
    import mujoco
    import torch

    print(f"GPU: {torch.cuda.get_device_name(0)}; jax {jax.__version__} on {jax.devices()[0]}; "
          f"mujoco {mujoco.__version__}; torch {torch.__version__}; {os.cpu_count()} CPUs; "
          f"model: bundled {MODEL}; {args.steps} steps x {args.rounds} rounds", flush=True)
    rows: list[tuple[int, str, float, float, float | None]] = []
    env = (f"{torch.cuda.get_device_name(0)}; jax {jax.__version__}; mujoco "
           f"{mujoco.__version__}; torch {torch.__version__}; {os.cpu_count()} CPUs; "
           f"{time.strftime('%Y-%m-%d %H:%M %Z')}")

    def save() -> None:
        if args.json:
            Path(args.json).write_text(json.dumps({
                "command": "python -m benchmarks.gpu.data_plane " + shlex.join(sys.argv[1:]),
                "env": env, "rows": rows}, indent=1))

    rng = np.random.default_rng(0)
    for num_envs in args.sizes:
        ctrl = rng.uniform(-1, 1, (num_envs, 8)).astype(np.float32)
        started = time.perf_counter()
        modes = build(mjx_modes(num_envs, ctrl, torch))
        print(f"N={num_envs}: set up (compiles included) in {time.perf_counter() - started:.1f} s",
              flush=True)
        if not modes or not isinstance(modes[0], InProcess):
            print("  in-process MJX failed: no ratios for this N", flush=True)
            continue
        try:
            measured = compare(modes, num_envs, args.steps, args.rounds)
        finally:
            for mode in modes:
                mode.close()
        if measured[0][0] != InProcess.name:
            print("  in-process MJX failed: no ratios for this N", flush=True)
            continue
        for name, rate, latency, ratio in measured:
            rows.append((num_envs, name, rate, latency, ratio))
            print(f"  {name:40s} {rate:12,.0f} env-steps/s  {latency:8.2f} ms  "
                  f"{ratio:5.2f}x", flush=True)
        save()

    cpu_ctrl = rng.uniform(-1, 1, (args.cpu_envs, 8))
    cpu_modes = build([lambda: CpuBatch(args.cpu_envs, cpu_ctrl),
                       lambda: Behind("mujoco", args.cpu_envs, cpu_ctrl, "shm",
                                      "MuJoCo CPU mujoco.batch behind unisim")])
    try:
        for name, rate, latency, _ in compare(cpu_modes, args.cpu_envs, args.steps,
                                              args.rounds):
            rows.append((args.cpu_envs, name, rate, latency, None))
            print(f"  {name:40s} {rate:12,.0f} env-steps/s  {latency:8.2f} ms", flush=True)
    finally:
        for mode in cpu_modes:
            mode.close()
    save()
    print("\n" + table(rows), flush=True)
    return 0


def publish_run(results: str, tests: str | None, name: str) -> int:
    """The GPU run's block: the test suite's outcome, then the benchmark's table."""
    from xml.etree import ElementTree

    from tools.figures.doc_figures import publish

    run = json.loads(Path(results).read_text())
    data: dict[str, Any] = {"benchmark": run, "tests": None}
    lines = []
    if tests:
        suite = ElementTree.parse(tests).getroot()
        suite = suite if suite.tag == "testsuite" else suite[0]
        cases: list[dict[str, Any]] = []
        for case in suite.iter("testcase"):
            outcome = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")),
                           "passed")
            said = " ".join(c.text or "" for c in case if c.tag == "system-out")
            cases.append({"test": f"{case.get('classname')}.{case.get('name')}",
                          "outcome": outcome, "seconds": float(case.get("time", 0)),
                          "notes": [line.strip() for line in said.splitlines()
                                    if line.startswith("MJX:")]})
        counts = {k: sum(c["outcome"] == k for c in cases)
                  for k in ("passed", "failure", "error", "skipped")}
        data["tests"] = {"counts": counts, "cases": cases}
        lines.append(f"GPU test suite (`tools/gpu/gpu_run.sh`, {run['env']}): "
                     f"**{counts['passed']} passed, {counts['failure']} failed, "
                     f"{counts['error']} errors, {counts['skipped']} skipped**.\n")
        lines += [f"- {c['outcome'].upper()}: `{c['test']}`" for c in cases
                  if c["outcome"] in ("failure", "error")]
        lines += [f"- `{c['test'].rsplit('.', 1)[-1]}`: {note}" for c in cases
                  for note in c["notes"]]
        lines.append("")
    lines.append(f"`{run['command']}`:\n")
    lines.append(table([tuple(row) for row in run["rows"]]))
    publish(name, "\n".join(lines) + "\n", data, run["command"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
