"""Where the host's time goes in ``Backend.step``: pyinstrument over many steps.

    .venv/bin/python benchmarks/profile_step.py [--pipe] [--num-envs 1] [--model cartpole]

On the trivial model (one cartpole) the worker's physics is about a microsecond, so the
profile is the host's own overhead plus the wait for the reply: the doorbell's spin and
futex wait by default, ``os.write``/``os.read`` on the pipe with ``--pipe``.
"""

from __future__ import annotations

import argparse

import numpy as np
from pyinstrument import Profiler

import unisim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="cartpole")
    parser.add_argument("--num-envs", type=int, default=1)
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--interval", type=float, default=1e-4, help="sampling interval (s)")
    parser.add_argument("--pipe", action="store_true", help="the pipe path (doorbell=False)")
    args = parser.parse_args()
    with unisim.Backend("mujoco", model=args.model, num_envs=args.num_envs, progress=False,
                        doorbell=not args.pipe) as sim:
        ctrl = np.zeros((args.num_envs, sim.layout.nu))
        for _ in range(200):  # warm up
            sim.step(ctrl)
        profiler = Profiler(interval=args.interval)
        with profiler:
            for _ in range(args.steps):
                sim.step(ctrl)
    session = profiler.last_session
    assert session is not None
    per_step = session.duration / args.steps * 1e6
    path = "pipe" if args.pipe else "doorbell"
    print(f"{args.steps} steps of {args.model} x{args.num_envs} ({path}): {per_step:.1f} µs "
          "per step under the profiler")
    print(profiler.output_text(unicode=True, color=False, show_all=False))


if __name__ == "__main__":
    main()
