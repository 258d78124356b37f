"""Command line: ``python -m unisim demo | doctor``."""

from __future__ import annotations

import argparse
import logging


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="unisim", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="step a quadruped on a worker, beside in-process")
    demo.add_argument("--num-envs", type=int, default=256)
    demo.add_argument("--steps", type=int, default=200)
    demo.add_argument("--python", default=None, help="worker interpreter (default: this one)")
    commands.add_parser("doctor", help="show which worker interpreters and engines were found")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(args.num_envs, args.steps, args.python)
    if args.command == "doctor":
        from .doctor import run_doctor

        return run_doctor()
    return 2
