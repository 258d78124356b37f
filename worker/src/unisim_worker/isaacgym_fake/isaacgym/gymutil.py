"""The fake ``isaacgym.gymutil``: the command-line, config and viewer helpers legged_gym,
IsaacGymEnvs and the SDK's examples call, written anew.

``parse_arguments`` takes the SDK's common options (``--sim_device``, ``--pipeline``,
``--graphics_device_id``, ``--flex``/``--physx``, ``--num_threads``, ``--subscenes``,
``--slices``) plus ``custom_parameters`` (dicts of ``name`` with ``type`` [``default``] or
``action``, and ``help``: the keys the SDK reads; others are ignored as there), and
derives what legged_gym reads: ``sim_device_type``, ``compute_device_id``, ``use_gpu``,
``use_gpu_pipeline`` and ``physics_engine``. ``parse_sim_config`` copies a task config's
``sim`` section into ``SimParams`` (legged_gym's ``parse_sim_params``).
"""

import argparse
import sys

from ._enums import ContactCollection, SimType, UpAxis
from ._lines import (  # noqa: F401  (gymutil's names)
    AxesGeometry,
    LineGeometry,
    WireframeBBoxGeometry,
    WireframeBoxGeometry,
    WireframeSphereGeometry,
    draw_line,
    draw_lines,
)
from ._types import Vec3

# SimParams.physx / .flex fields that parse_sim_config reads, by type; other keys are
# ignored, as the SDK ignores them
PHYSX_FIELDS = {
    int: ("num_threads", "solver_type", "num_position_iterations", "num_velocity_iterations",
          "max_gpu_contact_pairs", "num_subscenes", "contact_collection"),
    float: ("contact_offset", "rest_offset", "bounce_threshold_velocity",
            "max_depenetration_velocity", "default_buffer_size_multiplier",
            "friction_correlation_distance", "friction_offset_threshold"),
    bool: ("use_gpu", "always_use_articulations"),
}
FLEX_FIELDS = {
    int: ("solver_type", "num_outer_iterations", "num_inner_iterations", "friction_mode"),
    float: ("relaxation", "warm_start", "contact_regularization", "geometric_stiffness",
            "shape_collision_distance", "shape_collision_margin", "dynamic_friction",
            "static_friction", "particle_friction"),
    bool: ("deterministic_mode",),
}


def parse_device_str(device_str):
    """``"cuda:1"`` -> ``("cuda", 1)``; ``"cpu"`` -> ``("cpu", 0)``."""
    kind, _, index = str(device_str).partition(":")
    if kind not in ("cpu", "cuda") or (kind == "cpu" and index):
        raise ValueError("invalid device string %r: use cpu, cuda or cuda:<n>" % device_str)
    try:
        return kind, int(index) if index else 0
    except ValueError:
        raise ValueError("invalid device string %r: %r is not a device number"
                         % (device_str, index)) from None


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
        _add_custom(parser, parameter)
    args = parser.parse_args(sys.argv[1:])
    args.sim_device_type, args.compute_device_id = parse_device_str(args.sim_device)
    pipeline = args.pipeline.lower()
    if pipeline not in ("cpu", "gpu", "cuda"):
        raise ValueError("invalid pipeline %r: use cpu or gpu" % args.pipeline)
    args.use_gpu_pipeline = pipeline in ("gpu", "cuda")
    if args.sim_device_type != "cuda" and args.flex:
        print("Can't use Flex with CPU. Changing sim device to 'cuda:0'")
        args.sim_device = "cuda:0"
        args.sim_device_type, args.compute_device_id = "cuda", 0
    if args.sim_device_type != "cuda" and args.use_gpu_pipeline:
        print("Can't use GPU pipeline with CPU Physics. Changing pipeline to 'CPU'.")
        args.pipeline = "CPU"
        args.use_gpu_pipeline = False
    args.use_gpu = args.sim_device_type == "cuda"
    args.physics_engine = SimType.SIM_FLEX if args.flex else SimType.SIM_PHYSX
    if no_graphics and args.nographics:
        args.headless = True
    if args.slices is None:
        args.slices = args.subscenes
    return args


def _add_custom(parser, parameter):
    """One custom parameter, read as the SDK reads it: ``name`` with ``type`` (and
    ``default``) or ``action``, and ``help``; one without is reported and skipped."""
    name = parameter.get("name")
    help_text = parameter.get("help", "")
    if name and "type" in parameter:
        extra = {"default": parameter["default"]} if "default" in parameter else {}
        parser.add_argument(name, type=parameter["type"], help=help_text, **extra)
    elif name and "action" in parameter:
        parser.add_argument(name, action=parameter["action"], help=help_text)
    else:
        print("ERROR: command line argument %r needs a name and a type or an action; not "
              "added (supported keys: name, type, default, action, help)" % (parameter,))


def parse_sim_config(sim_cfg, sim_options):
    """A config's ``sim`` section (dt, substeps, up_axis, gravity, use_gpu_pipeline, and
    ``physx``/``flex`` subsections) into ``sim_options``, a ``SimParams``."""
    if "dt" in sim_cfg:
        sim_options.dt = float(sim_cfg["dt"])
    if "substeps" in sim_cfg:
        sim_options.substeps = int(sim_cfg["substeps"])
    if "up_axis" in sim_cfg:
        sim_options.up_axis = UpAxis(sim_cfg["up_axis"])
    if "gravity" in sim_cfg:
        x, y, z = tuple(sim_cfg["gravity"])
        sim_options.gravity = Vec3(x, y, z)
    if "use_gpu_pipeline" in sim_cfg:
        sim_options.use_gpu_pipeline = bool(sim_cfg["use_gpu_pipeline"])
    if "flex" in sim_cfg:
        _parse_fields(sim_cfg["flex"], sim_options.flex, FLEX_FIELDS)
    if "physx" in sim_cfg:
        _parse_fields(sim_cfg["physx"], sim_options.physx, PHYSX_FIELDS)


def _parse_fields(section, params, fields):
    for kind, names in fields.items():
        for name in names:
            if name in section:
                value = section[name]
                setattr(params, name, ContactCollection(value)
                        if name == "contact_collection" else kind(value))


def _indent_xml(elem, level=0):
    """Indent an ElementTree in place for writing (IsaacGymEnvs' Quadcopter writes its MJCF
    so)."""
    pad = "\n" + level * "  "
    if len(elem):
        if not elem.text or not elem.text.strip():
            elem.text = pad + "  "
        for child in elem:
            _indent_xml(child, level + 1)
        if not child.tail or not child.tail.strip():
            child.tail = pad
    if level and (not elem.tail or not elem.tail.strip()):
        elem.tail = pad
