"""Stepping loops timed where they run, on any interpreter (Python 3.8+).

The host imports ``InProcessMujoco`` and ``timed_rate`` directly; for another interpreter
(Python 3.8's MuJoCo 3.2, EnvPool's own venv) it runs this file as a server that reads one
JSON request per line on stdin and answers one JSON line on stdout:

    {"op": "make", "system": "mujoco" | "envpool", "num_envs": N, ...} -> {"ok": true, ...}
    {"op": "measure", "budget": seconds}                               -> {"rate": r, ...}
    {"op": "close"}                                                    -> {"ok": true}
"""

import importlib
import importlib.util
import json
import os
import sys
import time
from typing import IO, Any, Callable, Dict, Iterable, Optional, Tuple, Union

import numpy as np

CTRL_SETS = 4  # distinct random control arrays, cycled


def timed_rate(step: Callable[[], object], num_envs: int, budget: float, min_steps: int = 2
               ) -> Tuple[float, int]:
    """env-steps/s of ``step()`` over at least ``budget`` seconds, after one warm-up step.

    The warm-up absorbs the wake-up of threads or processes that slept while another
    system was being measured.
    """
    step()
    steps = 0
    start = time.perf_counter()
    while True:
        step()
        steps += 1
        elapsed = time.perf_counter() - start
        if steps >= min_steps and elapsed >= budget:
            return num_envs * steps / elapsed, steps


def random_controls(num_envs: int, ctrl_range: Any, seed: int = 0) -> Any:
    """``CTRL_SETS`` arrays of (num_envs, nu) uniform in the actuators' ranges."""
    low, high = np.asarray(ctrl_range, dtype=np.float64).T
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=(CTRL_SETS, num_envs, len(low)))


class InProcessMujoco:
    """What the unisim worker does, in this process: ``mujoco.batch`` if present, else a
    loop over one MjData per env. State is read through views, never copied."""

    def __init__(self, model_path: str, num_envs: int, keyframe: Optional[str] = None,
                 substeps: int = 5, threads: Optional[int] = None,
                 zero_ctrl: bool = False) -> None:
        import mujoco

        self.mujoco = mujoco
        self.model = mujoco.MjModel.from_xml_path(model_path)
        self.num_envs = num_envs
        self.substeps = substeps
        key = -1 if keyframe is None else mujoco.mj_name2id(
            self.model, mujoco.mjtObj.mjOBJ_KEY, keyframe)
        self.controls = random_controls(num_envs, self.model.actuator_ctrlrange)
        if zero_ctrl:
            self.controls[:] = 0.0
        self.count = 0
        try:
            import mujoco.batch
        except ImportError:
            self.kind = "MjData loop"
            self.datas = [mujoco.MjData(self.model) for _ in range(num_envs)]
            for data in self.datas:
                if key >= 0:
                    mujoco.mj_resetDataKeyframe(self.model, data, key)
                mujoco.mj_forward(self.model, data)
            self.step: Callable[[], None] = self._step_loop
        else:
            self.kind = "mujoco.batch"
            self.batch = mujoco.batch.Batch(self.model, nsim=num_envs,
                                            nthread=threads or os.cpu_count() or 1)
            self.batch.reset(np.arange(num_envs), keyframe=key, stage=0)
            self.batch.forward()
            self.ctrl = self.batch.bind("ctrl")
            self.step = self._step_batch

    def _next_controls(self) -> Any:
        self.count += 1
        return self.controls[self.count % CTRL_SETS]

    def _step_batch(self) -> None:
        self.ctrl[:] = self._next_controls()
        self.batch.step(nstep=self.substeps)

    def _step_loop(self) -> None:
        mj_step, model, substeps = self.mujoco.mj_step, self.model, self.substeps
        controls = self._next_controls()
        for i, data in enumerate(self.datas):
            data.ctrl[:] = controls[i]
            mj_step(model, data, substeps)

    def close(self) -> None:
        self.batch, self.datas = None, []


def install_packages(worker_dir: str) -> None:
    """Make ``unisim_worker`` and ``unisim_protocol`` importable: they are on the host's
    interpreter; elsewhere (Python 3.8) the worker's bootstrap gives them to this one."""
    try:
        import unisim_worker  # noqa: F401
    except ImportError:
        spec = importlib.util.spec_from_file_location(
            "unisim_bootstrap", os.path.join(worker_dir, "bootstrap.py"))
        if spec is None or spec.loader is None:
            raise ImportError(f"no worker bootstrap in {worker_dir}") from None
        bootstrap: Any = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bootstrap)
        bootstrap.install(protocol_dir(worker_dir), worker_dir)


def protocol_dir(worker_dir: str) -> str:
    """``unisim_protocol``'s folder beside ``unisim_worker``'s: installed, both are in one
    site-packages; in a checkout, each is in its own root (worker/src, protocol/src)."""
    installed = os.path.join(os.path.dirname(worker_dir), "unisim_protocol")
    if os.path.isdir(installed):
        return installed
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(worker_dir))))
    return os.path.join(root, "protocol", "src", "unisim_protocol")


def load_worker_module(worker_dir: str, name: str) -> Any:
    """``unisim_worker.<name>``, its packages installed first (``install_packages``)."""
    install_packages(worker_dir)
    return importlib.import_module("unisim_worker." + name)


class WorkerStepper:
    """The unisim worker's own stepper (``unisim_worker.engines.mujoco.steppers``) in this
    process, over plain arrays: what ``MujocoEngine.step`` does (the physics, the copies between the
    engine and the slots, the warnings check) without any process boundary. ``kind`` says
    which stepper."""

    def __init__(self, model_path: str, num_envs: int, substeps: int, threads: int,
                 worker_dir: str, keyframe: Optional[str] = None) -> None:
        import mujoco

        steppers = load_worker_module(worker_dir, "engines.mujoco.steppers")

        model = mujoco.MjModel.from_xml_path(model_path)
        stepper = (steppers.BatchStepper if steppers._has_batch(mujoco)
                   else steppers.LoopStepper)
        key = None if keyframe is None else mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY,
                                                               keyframe)
        self.stepper = stepper(mujoco, model, num_envs, key, threads)
        self.kind = f"worker {self.stepper.name} stepper, {threads} threads"
        self.ctrl = np.zeros((num_envs, model.nu))
        self.qpos = np.zeros((num_envs, model.nq))
        self.qvel = np.zeros((num_envs, model.nv))
        self.warnings = np.zeros(num_envs, dtype=np.uint8)
        self.num_envs = num_envs
        self.substeps = substeps
        self._step = self.stepper.bind({"ctrl": self.ctrl, "qpos": self.qpos,
                                        "qvel": self.qvel, "warnings": self.warnings})

    def step(self) -> None:
        self._step(self.substeps)

    def close(self) -> None:
        self.stepper = self._step = None


class EnvPoolSystem:
    """EnvPool's synchronous step of a whole batch (``batch_size == num_envs``)."""

    def __init__(self, task: str, num_envs: int, num_threads: int) -> None:
        import envpool  # type: ignore[import-not-found]

        self.env = envpool.make(task, env_type="gymnasium", num_envs=num_envs,
                                batch_size=num_envs, num_threads=num_threads)
        self.env.reset()
        space = self.env.action_space
        self.controls = random_controls(num_envs, np.stack([space.low, space.high], axis=1))
        self.num_envs = num_envs
        self.count = 0
        self.kind = f"envpool {envpool.__version__}, {num_threads} threads"

    def step(self) -> None:
        self.count += 1
        self.env.step(self.controls[self.count % CTRL_SETS])

    def close(self) -> None:
        self.env.close()


System = Union[InProcessMujoco, WorkerStepper, EnvPoolSystem]


def make(request: Dict[str, Any]) -> System:
    if request["system"] == "mujoco":
        return InProcessMujoco(request["model"], request["num_envs"], request.get("keyframe"),
                               request["substeps"], request.get("threads"),
                               request.get("zero_ctrl", False))
    if request["system"] == "stepper":
        return WorkerStepper(request["model"], request["num_envs"], request["substeps"],
                             request.get("threads") or 1, request["worker"],
                             request.get("keyframe"))
    if request["system"] == "envpool":
        return EnvPoolSystem(request["task"], request["num_envs"], request["num_threads"])
    raise ValueError(f"unknown system {request['system']!r}")


def serve(stdin: Iterable[str], stdout: IO[str]) -> None:
    system: Optional[System] = None
    for line in stdin:
        request = json.loads(line)
        op = request["op"]
        try:
            if op == "make":
                if system is not None:
                    system.close()
                system = make(request)
                reply = {"ok": True, "kind": system.kind}
            elif op == "measure":
                if system is None:
                    raise ValueError("measure before make")
                rate, steps = timed_rate(system.step, system.num_envs, request["budget"])
                reply = {"rate": rate, "steps": steps}
            elif op == "close":
                if system is not None:
                    system.close()
                system = None
                reply = {"ok": True}
            else:
                raise ValueError(f"unknown op {op!r}")
        except Exception as exc:  # reported to the host, which prints it in the table
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()


if __name__ == "__main__":
    # Replies go to a private copy of fd 1; C-library prints land on stderr instead.
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    serve(sys.stdin, replies)
