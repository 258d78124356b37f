"""What the NaN/warning checks cost per step at N=4096 quadrupeds, beside the step itself.

    .venv/bin/python -m benchmarks.latency.warnings_cost [--num-envs 4096] [--publish]

Host side: ``nan_policy="raise"``'s finiteness check of ctrl, and the check of the flags
every step makes (``WarningMonitor.after_step``, no env flagged). Worker side: the engine's
``warnings()`` (MuJoCo's per-env warning counters into the flags slot), for the
``mujoco.batch`` stepper and the MjData loop, run here in-process on this interpreter's
MuJoCo. Prints microseconds; asserts nothing.
"""

from __future__ import annotations

import argparse
import timeit

import mujoco
import numpy as np

from tools.figures.doc_figures import publish
from unisim import models
from unisim.sim_warnings import WarningMonitor
from unisim_worker.engines.mujoco.steppers import BatchStepper, LoopStepper


def per_call_us(function: object, number: int) -> float:
    return min(timeit.repeat(function, number=number, repeat=3)) / number * 1e6  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--publish", action="store_true",
                        help="write the figures into README.md (figures:warnings-cost)")
    args = parser.parse_args()
    n = args.num_envs
    model = mujoco.MjModel.from_xml_path(str(models.path("quadruped")))
    ctrl = np.zeros((n, model.nu))
    flags = np.zeros(n, np.uint8)
    qpos, qvel = np.zeros((n, model.nq)), np.zeros((n, model.nv))
    monitor = WarningMonitor("warn", flags, ("badctrl",), n)
    data: dict[str, float] = {
        "host_isfinite_us": per_call_us(lambda: np.isfinite(ctrl).all(), 200),
        "host_after_step_us": per_call_us(monitor.after_step, 2000)}
    lines = [f"{n} quadrupeds, MuJoCo {mujoco.__version__}, microseconds per step",
             f"  host: np.isfinite(ctrl).all()  (nan_policy='raise')  "
             f"{data['host_isfinite_us']:10.1f}",
             f"  host: the flags' check        (every step)          "
             f"{data['host_after_step_us']:10.1f}"]
    steppers = [LoopStepper] + ([BatchStepper] if _batch() else [])
    for stepper_class in steppers:
        stepper = stepper_class(mujoco, model, n, 0, 1)
        step = per_call_us(lambda s=stepper: s.step(ctrl, 4, qpos, qvel), 2)
        check = per_call_us(lambda s=stepper: s.warnings(flags), 20)
        data[f"{stepper.name}_step_us"], data[f"{stepper.name}_warnings_us"] = step, check
        lines.append(f"  worker, {stepper.name:<5} stepper, 1 thread: step (4 substeps) "
                     f"{step:12.0f}, warnings() {check:8.1f} ({check / step:.2%})")
    print("\n".join(lines))
    if args.publish:
        block = ["```", "$ .venv/bin/python -m benchmarks.latency.warnings_cost", *lines, "```",
                 "", "One run on this 2-core machine, shared with other jobs: the "
                 "microseconds vary with the load, the proportions much less."]
        publish("warnings-cost", "\n".join(block), data,
                "python -m benchmarks.latency.warnings_cost --publish")


def _batch() -> bool:
    try:
        import mujoco.batch  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
