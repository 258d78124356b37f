"""The fake ``isaacgym.gymutil``: the command-line and device helpers legged_gym and the
SDK's examples call (``parse_arguments``, ``parse_device_str``), written anew.

``parse_arguments`` takes the SDK's common options (``--sim_device``, ``--pipeline``,
``--graphics_device_id``, ``--flex``/``--physx``, ``--num_threads``, ``--subscenes``,
``--slices``) plus ``custom_parameters`` (dicts of ``name`` and argparse keywords), and
derives what legged_gym reads: ``sim_device_type``, ``compute_device_id``, ``use_gpu``,
``use_gpu_pipeline`` and ``physics_engine``.
"""

import argparse
import sys

from ._enums import SimType


def parse_device_str(device_str):
    """``"cuda:1"`` -> ``("cuda", 1)``; ``"cpu"`` -> ``("cpu", 0)``."""
    kind, _, index = str(device_str).partition(":")
    if kind not in ("cpu", "cuda"):
        raise ValueError("invalid device string %r: use cpu, cuda or cuda:<n>" % device_str)
    return kind, int(index) if index else 0


def parse_arguments(description="Isaac Gym Example", headless=False, no_graphics=False,
                    custom_parameters=()):
    parser = argparse.ArgumentParser(description=description)
    if headless:
        parser.add_argument("--headless", action="store_true", help="Run headless")
    if no_graphics:
        parser.add_argument("--nographics", action="store_true",
                            help="Disable graphics context creation")
    parser.add_argument("--sim_device", type=str, default="cuda:0")
    parser.add_argument("--pipeline", type=str, default="gpu")
    parser.add_argument("--graphics_device_id", type=int, default=0)
    engine = parser.add_mutually_exclusive_group()
    engine.add_argument("--flex", action="store_true")
    engine.add_argument("--physx", action="store_true")
    parser.add_argument("--num_threads", type=int, default=0)
    parser.add_argument("--subscenes", type=int, default=0)
    parser.add_argument("--slices", type=int)
    for parameter in custom_parameters:
        options = dict(parameter)
        name = options.pop("name")
        parser.add_argument(name, **options)
    args = parser.parse_args(sys.argv[1:])
    args.sim_device_type, args.compute_device_id = parse_device_str(args.sim_device)
    args.pipeline = args.pipeline.lower()
    if args.pipeline not in ("cpu", "gpu", "cuda"):
        raise ValueError("invalid pipeline %r: use cpu or gpu" % args.pipeline)
    args.use_gpu_pipeline = args.pipeline in ("gpu", "cuda") and args.sim_device_type == "cuda"
    args.use_gpu = args.sim_device_type == "cuda"
    args.physics_engine = SimType.SIM_FLEX if args.flex else SimType.SIM_PHYSX
    if args.slices is None:
        args.slices = args.subscenes
    return args
