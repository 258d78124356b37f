"""Command line: ``python -m unisim demo | doctor | train | task``."""

from __future__ import annotations

import argparse
import logging


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="unisim", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="a trained quadruped walks on a Python 3.8 "
                               "worker; its speed beside in-process MuJoCo")
    demo.add_argument("--num-envs", type=int, default=64)
    demo.add_argument("--steps", type=int, default=300, help="control steps (50 Hz)")
    demo.add_argument("--python", default=None, help="worker interpreter (default: a "
                      "Python 3.8 from UNISIM_PY38 or .venv38, else this one)")
    demo.add_argument("--video", default="runs/demo/quadruped.mp4",
                      help="video of env 0 (.mp4 or .gif)")
    demo.add_argument("--no-video", action="store_true")
    doctor = commands.add_parser("doctor", help="will it work here? start a worker on each "
                                 "interpreter found, GL, GPUs, /dev/shm")
    doctor.add_argument("--steps", type=int, default=200)
    train = commands.add_parser("train", help="train a task (cartpole, quadruped) with rsl_rl "
                                "PPO; writes runs/<task>-<time>/ (needs the train extra)")
    train.add_argument("task", help="cartpole, quadruped, or your Task subclass as "
                       "module:Class")
    train.add_argument("--iterations", type=int, default=None, help="PPO iterations "
                       "(default: the task's recipe)")
    train.add_argument("--num-envs", type=int, default=None)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--python", default=None, help="worker interpreter (default: a "
                       "Python 3.8 from UNISIM_PY38 or .venv38, else this one)")
    train.add_argument("--out", default="runs", help="parent folder of the run folder")
    train.add_argument("--no-video", action="store_true", help="skip the policy video")
    train.add_argument("--randomize", action="store_true", help="train under the task's "
                       "physics randomization (quadruped: friction, added mass, pushes)")
    task = commands.add_parser("task", help="your IsaacGym task (legged_gym, IsaacGymEnvs) in "
                               "a Python 3.8 worker: check it, or train it with rsl_rl PPO "
                               "(docs/bring-your-isaacgym-task.md)")
    from .task_bridge.cli import add_arguments

    add_arguments(task)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(args.num_envs, args.steps, args.python,
                        None if args.no_video else args.video)
    if args.command == "doctor":
        from .doctor import run_doctor

        return run_doctor(args.steps)
    if args.command == "train":
        from .errors import UnisimError
        from .training.run import summary_lines
        from .training.run import train as run_training

        try:
            result = run_training(args.task, iterations=args.iterations,
                                  num_envs=args.num_envs, seed=args.seed, python=args.python,
                                  out=args.out, video=not args.no_video,
                                  randomize=args.randomize)
        except (ValueError, UnisimError) as exc:
            parser.exit(2, f"unisim train: {exc}\n")
        print("\n".join(summary_lines(result)))
        return 0
    if args.command == "task":
        from .errors import UnisimError
        from .task_bridge.cli import run

        try:
            return run(args)
        except (ValueError, UnisimError) as exc:
            parser.exit(2, f"unisim task: {exc}\n")
    return 2
