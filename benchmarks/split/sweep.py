"""The split sweep: env-steps/s over N x workers x threads, beside in-process MuJoCo.

    python -m benchmarks.split.sweep [--quick] [--sizes 1024,4096,16384] [--model PATH]
                                     [--json FILE] [--plot FILE] [--name NAME]
    python -m benchmarks.split.sweep --publish FILE.json --name NAME [--before FILE.json]

At every N, side by side in interleaved repetitions: in-process ``mujoco.batch`` on every
core (the reference) and on one thread; the unisim worker's own stepper run in this
process (physics plus the copies between engine and slots, no process boundary); unisim
with its default split and with ``workers=K`` (threads = cores / K); and, with a Python 3.8
interpreter (``UNISIM_PY38``), MuJoCo 3.2's MjData loop in-process on 3.8, the worker's
stepper there (in one process, and split over 2 and 8 independent processes timed at once:
the machine's own scaling, the most a pool of that many workers could get), and the 3.8
worker with its default split (its workers sharing rows, and not) and ``workers=1, 2, 8``.
Ratios are medians of per-repetition ratios to the reference. Then: where a step's time goes
(by subtraction of those rows), memory per worker and per env, step latency (the suite's),
and the targets of issue 15. Ctrl is zeros, written every step; 1 substep. Every system
starts from the model's state after ``SETTLE`` seconds at zero ctrl (keyframe ``settled`` of
a copy of the model): a falling ant has no contacts yet and steps faster, so systems that
had made different numbers of steps would otherwise be timed on different work.

``--name`` publishes the block ``figures:NAME`` in docs/benchmarks.md with its result file
(tools/figures/doc_figures.py) and the plot docs/figures/NAME.png; ``--publish`` does that from a
saved ``--json`` (a run made on another machine), ``--before`` adds that run's profile.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

import unisim
from benchmarks.measure import interleaved, paired_ratio
from benchmarks.py38.runner import InProcessMujoco, WorkerStepper, timed_rate
from benchmarks.split.sweep_report import GANG38, LOOP38, POOL38, REF, STEPPER38, block, plot
from benchmarks.systems import Concurrent, Remote, RemoteRunner, System, python38
from tools.figures.doc_figures import ROOT, invocation, publish
from unisim import split
from unisim.process import BOOTSTRAP

ONE = "in-process, 1 thread"
STEPPER = "worker's stepper in-process, all threads"
DEFAULT = "unisim default split"
DEFAULT38 = "3.8 worker, default split"
FIXED38 = "3.8 worker, default split, rows not shared"
SETTLE = 2.0  # seconds of simulated time before the state every system starts from
KEY = "settled"
# runner.py's request for the 3.8 worker's stepper on one thread (STEPPER38, GANG38)
STEPPER38_REQUEST = {"system": "stepper", "threads": 1, "worker": str(BOOTSTRAP.parent),
                     "keyframe": KEY}


class Local:
    """A stepping callable of this process."""

    def __init__(self, sim: Any, num_envs: int) -> None:
        self.sim, self.num_envs = sim, num_envs
        self.worker_pids: list[int] = []

    def measure(self, budget: float) -> float:
        return timed_rate(self.sim.step, self.num_envs, budget)[0]

    def close(self) -> None:
        self.sim.close()


class Sim:
    """A ``unisim.Backend`` stepped with zero ctrl; remembers its split and memory."""

    def __init__(self, model: str, num_envs: int, **options: Any) -> None:
        self.num_envs = num_envs
        self.sim = unisim.Backend("mujoco", model=model, num_envs=num_envs, progress=False,
                                  timeout=120.0, keyframe=KEY, **options)
        self.worker_pids = self.sim.worker_pids
        self.ctrl = np.zeros((num_envs, self.sim.layout.nu))
        self.sim.step(self.ctrl)
        chosen = getattr(self.sim, "split", None)  # absent before issue 15
        self.split = (f"{chosen.workers}x{chosen.threads}" if chosen
                      else f"{len(self.worker_pids)}x?")
        self.memory = memory(self.sim)

    def step(self) -> None:
        self.sim.step(self.ctrl)

    def measure(self, budget: float) -> float:
        return timed_rate(self.step, self.num_envs, budget)[0]

    def close(self) -> None:
        self.sim.close()


class FixedRows(Sim):
    """The split as it was before workers shared rows: each worker steps a fixed share.
    (No option asks for that; this benchmark chooses the split as if rows could not be
    shared, which is what per-env physics randomisation does.)"""

    def __init__(self, model: str, num_envs: int, **options: Any) -> None:
        choose = split.choose
        split.choose = lambda *args, **kw: choose(*args, **{**kw, "shareable": False})
        try:
            super().__init__(model, num_envs, **options)
        finally:
            split.choose = choose


def memory(sim: unisim.Backend) -> dict[str, Any]:
    """Resident memory of each worker (MiB, from /proc/PID/status) and slot bytes per env."""
    fields = ("VmRSS", "RssAnon", "RssFile", "RssShmem")
    per_worker = []
    for pid in sim.worker_pids:
        status = dict(line.split(":", 1) for line in
                      Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
        per_worker.append({f: int(status[f].split()[0]) / 1024 for f in fields if f in status})
    return {"engine": f"{sim.layout.engine} {sim.layout.engine_version} ({sim.layout.stepper})",
            "workers": len(per_worker),
            "rss_mib": {f: statistics.mean(w.get(f, 0.0) for w in per_worker) for f in fields},
            "slot_bytes_per_env": sum(s.nbytes(1) for s in sim.layout.slots)}


def systems(model: str, cfg: argparse.Namespace, py38: str | None,
            runner38: RemoteRunner | None) -> dict[str, Any]:
    """Row name -> factory of N; a str is why the row cannot run here."""
    cpus, worker = split.cores(), str(BOOTSTRAP.parent)
    new_api = "threads" in inspect.signature(unisim.Backend).parameters
    rows: dict[str, Any] = {
        REF: lambda n: Local(InProcessMujoco(model, n, KEY, 1, cpus, zero_ctrl=True), n),
        ONE: lambda n: Local(InProcessMujoco(model, n, KEY, 1, 1, zero_ctrl=True), n),
        STEPPER: lambda n: Local(WorkerStepper(model, n, 1, cpus, worker, KEY), n),
        DEFAULT: lambda n: Sim(model, n),
    }
    for k in sorted({1, 2, 4, cpus} & set(range(1, cpus + 1))):
        threads = {"threads": cpus // k} if new_api else {}  # before: cores // K as well
        rows[f"unisim workers={k}, threads={cpus // k}"] = (
            lambda n, k=k, threads=threads: Sim(model, n, workers=k, **threads))
    missing = "n/a (no Python 3.8: set UNISIM_PY38)"
    remote = {LOOP38: {"system": "mujoco", "threads": 1, "zero_ctrl": True, "keyframe": KEY},
              STEPPER38: STEPPER38_REQUEST}
    for name, request in remote.items():
        rows[name] = ((lambda n, r=request: Remote(runner38, n, model=model, substeps=1, **r))
                      if runner38 else missing)
    for k in (k for k in POOL38 if k <= cpus):
        rows[GANG38.format(k=k)] = ((lambda n, k=k: independent_steppers(py38, model, n, k))
                                    if py38 else missing)
    rows[DEFAULT38] = (lambda n: Sim(model, n, python=py38)) if py38 else missing
    rows[FIXED38] = (lambda n: FixedRows(model, n, python=py38)) if py38 else missing
    for k in (1, *POOL38):
        if k <= cpus:
            rows[f"3.8 worker, workers={k}"] = ((lambda n, k=k: Sim(model, n, python=py38,
                                                                  workers=k))
                                                if py38 else missing)
    return rows


def independent_steppers(py38: str, model: str, num_envs: int, processes: int) -> Concurrent:
    """The 3.8 worker's stepper split over ``processes`` independent processes, timed at
    once: the most a pool of that many workers could get."""
    return Concurrent(py38, num_envs, processes, **STEPPER38_REQUEST, model=model,
                      substeps=1)


def sweep(model: str, cfg: argparse.Namespace, py38: str | None) -> dict[str, Any]:
    runner38 = RemoteRunner(py38) if py38 else None
    out: dict[str, Any] = {}
    try:
        factories = systems(model, cfg, py38, runner38)
        for n in cfg.sizes:
            built: dict[str, System] = {}
            skipped: dict[str, str] = {}
            try:
                for name, factory in factories.items():
                    if isinstance(factory, str):
                        skipped[name] = factory
                        continue
                    try:
                        built[name] = factory(n)
                    except Exception as exc:  # shown in the table, never hidden
                        skipped[name] = f"failed: {type(exc).__name__}: {exc}"[:160]
                started = time.perf_counter()
                rates = interleaved(built, cfg.reps, cfg.budget)
                print(f"N={n}: measured in {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
            finally:
                for system in built.values():
                    system.close()
            out[str(n)] = {
                "rates": rates,
                "median": {k: statistics.median(v) for k, v in rates.items()},
                "ratio": {k: paired_ratio(v, rates[REF]) for k, v in rates.items()
                          if REF in rates},
                "split": {k: s.split for k, s in built.items() if isinstance(s, Sim)},
                "memory": {k: s.memory for k, s in built.items() if isinstance(s, Sim)},
                "skipped": skipped}
    finally:
        if runner38:
            runner38.close()
    return out


def engine_memory(num_envs: int, py38: str | None, engines: list[str]) -> dict[str, Any]:
    """Memory per worker and per env of ``engines`` (those that start here), at ``num_envs``."""
    cases: dict[str, dict[str, Any]] = {
        "mujoco (this interpreter)": {"engine": "mujoco", "model": "quadruped"},
        "mock": {"engine": "mock"},
        "mjx, host shared memory": {"engine": "mjx", "model": "quadruped",
                                    "init_timeout": 600},
    }
    if py38:
        cases["mujoco (Python 3.8)"] = {"engine": "mujoco", "model": "quadruped",
                                        "python": py38}
    found: dict[str, Any] = {}
    for name, options in cases.items():
        if options["engine"] not in engines:
            continue
        try:
            with unisim.Backend(num_envs=num_envs, progress=False, workers=1,
                                **options) as sim:
                sim.step()
                found[name] = memory(sim)
        except Exception as exc:
            found[name] = {"skipped": f"{type(exc).__name__}: {exc}"[:160]}
    return found


def latency(quick: bool, py38: str | None) -> dict[str, Any]:
    """The suite's round trips (raw pipe floor, pipe path, doorbell), this run."""
    from benchmarks.throughput import suite
    from benchmarks.throughput.lineup import HOST

    results: dict[str, Any] = {}
    interpreters = {HOST: sys.executable, **({"3.8": py38} if py38 else {})}
    suite.latency(suite.Settings(quick), interpreters, results)
    return dict(results["latency"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(parser)
    parser.add_argument("--sizes", help="comma-separated N (default 256,1024,4096; "
                        "--quick: 64,256)")
    parser.add_argument("--json", type=Path, help="write every figure to this file (also "
                        "after each section, so a run cut short keeps what it measured)")
    parser.add_argument("--memory-engines", default="mujoco,mock,mjx",
                        help="engines whose memory is measured (default: %(default)s)")
    parser.add_argument("--only", choices=("latency", "sweep", "memory"), action="append",
                        help="run only these sections (repeatable)")
    parser.add_argument("--plot", type=Path, help="PNG (default: docs/figures/NAME.png)")
    parser.add_argument("--name", help="publish as figures:NAME in docs/benchmarks.md")
    parser.add_argument("--publish", type=Path, help="publish a saved --json run")
    parser.add_argument("--before", type=Path, help="with --publish: a run of the code "
                        "before, whose profile is shown beside")
    args = parser.parse_args(argv)
    if args.publish:
        saved: dict[str, Any] = json.loads(args.publish.read_text())
        before = json.loads(args.before.read_text()) if args.before else None
        return emit(saved, before, args)
    args.sizes = [int(n) for n in (args.sizes or ("64,256" if args.quick
                                                  else "256,1024,4096")).split(",")]
    model = run_defaults(args)
    py38 = python38()
    started = time.perf_counter()
    data: dict[str, Any] = {
        "command": invocation(argv),
        "machine": {"cpus": split.cores(), "machine": platform.machine(),
                    "python": platform.python_version(), "numpy": np.__version__,
                    "mujoco": mujoco.__version__, "py38": py38,
                    "model": Path(model).name, "load": os.getloadavg(),
                    "date": time.strftime("%Y-%m-%d %H:%M %Z")},
        "settings": {"sizes": args.sizes, "reps": args.reps, "budget": args.budget,
                     "settle": SETTLE},
    }
    print(f"sweep: {data['machine']}", flush=True)
    with tempfile.TemporaryDirectory(prefix="unisim-sweep-") as folder:
        start = settled(model, Path(folder))
        sections: dict[str, Callable[[], dict[str, Any]]] = {
            "latency": lambda: latency(args.quick, py38),
            "sweep": lambda: sweep(start, args, py38),
            "memory": lambda: engine_memory(1024 if not args.quick else 64, py38,
                                            args.memory_engines.split(",")),
        }
        for section, run in sections.items():
            data[section] = run() if not args.only or section in args.only else {}
            data["seconds"] = time.perf_counter() - started
            if args.json:
                args.json.write_text(json.dumps(data, indent=1))
    return emit(data, None, args)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """``--quick``, ``--model``, ``--reps`` and ``--budget``: how a run of this sweep or of
    ``chunk_plans.py`` is timed (``run_defaults`` fills them in)."""
    parser.add_argument("--quick", action="store_true", help="small and short (CI)")
    parser.add_argument("--model", help="MJCF path (default: gymnasium's ant.xml if "
                        "gymnasium is installed, else the bundled quadruped)")
    parser.add_argument("--reps", type=int, help="interleaved repetitions (default 5; "
                        "--quick: 2)")
    parser.add_argument("--budget", type=float, help="seconds per measurement (default 0.4; "
                        "--quick: 0.05)")


def run_defaults(args: argparse.Namespace) -> str:
    """Fill in ``--reps`` and ``--budget``; the model to run."""
    args.reps = args.reps or (2 if args.quick else 5)
    args.budget = args.budget or (0.05 if args.quick else 0.4)
    return str(args.model or default_model())


def emit(data: dict[str, Any], before: dict[str, Any] | None, args: argparse.Namespace) -> int:
    text = block(data, before, args.name or "sweep")
    print(text)
    if args.name:
        path = args.plot or ROOT / "docs" / "figures" / f"{args.name}.png"
        plot(data, path)
        publish(args.name, text, {"after": data, "before": before}, data["command"])
    elif args.plot:
        plot(data, args.plot)
    return 0


def settled(model: str, folder: Path) -> str:
    """A copy of ``model`` in ``folder`` with keyframe ``KEY``: its state after ``SETTLE``
    seconds at zero ctrl (an ant at rest on its legs)."""
    text = Path(model).read_text()
    if "file=" in text:
        raise ValueError(f"{model} loads files of its own, which a copy elsewhere would not "
                         "find: give the sweep a model without file assets (ant.xml)")
    physics = mujoco.MjModel.from_xml_path(model)
    data = mujoco.MjData(physics)
    while data.time < SETTLE:
        mujoco.mj_step(physics, data)
    state = {name: " ".join(repr(float(v)) for v in getattr(data, name))
             for name in ("qpos", "qvel", "act")}
    key = (f'<keyframe><key name="{KEY}" qpos="{state["qpos"]}" qvel="{state["qvel"]}"'
           + (f' act="{state["act"]}"' if physics.na else "") + "/></keyframe>")
    head, tail = text.rsplit("</mujoco>", 1)
    path = folder / Path(model).name
    path.write_text(f"{head}{key}\n</mujoco>{tail}")
    return str(path)


def default_model() -> str:
    try:
        import gymnasium
    except ImportError:
        return str(unisim.models.path("quadruped"))
    return str(Path(gymnasium.__file__).parent / "envs/mujoco/assets/ant.xml")


if __name__ == "__main__":
    sys.exit(main())
