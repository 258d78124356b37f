"""The payloads with structure, each built and parsed here only: INIT's reply (a physics
layout or a render layout), ATTACH's request, CAPTURE's and RENDER's requests.

Builders take keyword arguments and return wire-safe maps; parsers check a received map
and raise ``SchemaError`` naming the field. Engines, the worker loop and the host all
use these, so a field is spelled in one place. PROTOCOL.md documents each.
Python 3.8, stdlib only.
"""

from .messages import MessageError, is_int

PHYSICS_LAYOUT = ("engine", "engine_version", "stepper", "num_envs", "nq", "nv", "nu", "nbody",
                  "timestep", "joint_names", "actuator_names", "body_names", "keyframes",
                  "ctrl_range", "slots")
RENDER_LAYOUT = ("engine", "engine_version", "nq", "nmocap", "cameras", "qpos0", "mocap_pos0",
                 "mocap_quat0", "slots")


class SchemaError(MessageError):
    """A payload that lacks a field, or has one of the wrong type."""


def slot(name, dtype, shape):
    """A slot of a layout: per-env ``shape`` of ``dtype`` (a numpy dtype string)."""
    return {"name": str(name), "dtype": str(dtype), "shape": [int(n) for n in shape]}


def physics_layout(engine, engine_version, stepper, num_envs, nq, nv, nu, nbody, timestep,
                   joint_names, actuator_names, body_names, keyframes, ctrl_range, slots,
                   report=None):
    """INIT's reply of a physics engine: sizes, names, control ranges and its slots
    (``ctrl``, ``qpos``, ``qvel`` at least; the host adds ``reset_mask``). ``report``: an
    optional map describing the engine's configuration."""
    layout = {
        "engine": str(engine), "engine_version": str(engine_version), "stepper": str(stepper),
        "num_envs": int(num_envs), "nq": int(nq), "nv": int(nv), "nu": int(nu),
        "nbody": int(nbody), "timestep": float(timestep),
        "joint_names": [str(n) for n in joint_names],
        "actuator_names": [str(n) for n in actuator_names],
        "body_names": [str(n) for n in body_names],
        "keyframes": [str(n) for n in keyframes],
        "ctrl_range": [[float(lo), float(hi)] for lo, hi in ctrl_range],
        "slots": list(slots),
    }
    if report is not None:
        layout["report"] = report
    return layout


def parse_physics_layout(reply):
    """INIT's reply checked to be a physics layout; returns it."""
    _require(reply, "INIT reply", PHYSICS_LAYOUT)
    for name in ("num_envs", "nq", "nv", "nu", "nbody"):
        _check(reply, "INIT reply", name, int)
    _check(reply, "INIT reply", "timestep", (int, float))
    for name in ("joint_names", "actuator_names", "body_names", "keyframes", "ctrl_range"):
        _check(reply, "INIT reply", name, list)
    _slots(reply, "INIT reply")
    return reply


def render_layout(engine_version, nq, nmocap, cameras, qpos0, mocap_pos0, mocap_quat0, slots):
    """INIT's reply of the render engine: the model's sizes, camera names, nominal state
    (arrays) and the per-row state slots the pool's arena must hold."""
    return {"engine": "render", "engine_version": str(engine_version), "nq": int(nq),
            "nmocap": int(nmocap), "cameras": [str(c) for c in cameras], "qpos0": qpos0,
            "mocap_pos0": mocap_pos0, "mocap_quat0": mocap_quat0, "slots": list(slots)}


def parse_render_layout(reply):
    _require(reply, "render INIT reply", RENDER_LAYOUT)
    _check(reply, "render INIT reply", "nq", int)
    _check(reply, "render INIT reply", "cameras", list)
    _slots(reply, "render INIT reply")
    return reply


def attach_request(arena, cuda=None):
    """ATTACH: the host arena's declaration (``arena.declaration``), and for device-resident
    slots the CUDA arena's (``cuda_arena``)."""
    request = {"arena": arena}
    if cuda is not None:
        request["cuda"] = cuda
    return request


def parse_attach_request(payload):
    """``(arena declaration, cuda declaration or None)``."""
    _require(payload, "ATTACH", ("arena",))
    _require(payload["arena"], "ATTACH arena", ("name", "size", "slots"))
    return payload["arena"], payload.get("cuda")


def capture_request(env_id, camera, width, height, image):
    """CAPTURE: draw env ``env_id`` (a row of the worker's slots) from ``camera`` (a name,
    an id or None for the free camera) into the image arena declared by ``image``."""
    return {"env_id": int(env_id), "camera": camera, "width": int(width),
            "height": int(height), "image": image}


def parse_capture_request(payload):
    _require(payload, "CAPTURE", ("env_id", "width", "height", "image"))
    for name in ("env_id", "width", "height"):
        _check(payload, "CAPTURE", name, int)
    return payload


def render_request(rows, width, height, camera, depth, randomize, call, source):
    """RENDER: draw rows ``[start, stop)`` of the state slots (or of ``source``, another
    arena's qpos) into the same rows of the image slots; ``call`` seeds randomisation."""
    return {"rows": [int(rows[0]), int(rows[1])], "width": int(width), "height": int(height),
            "camera": camera, "depth": bool(depth), "randomize": bool(randomize),
            "call": int(call), "source": source}


def parse_render_request(payload):
    _require(payload, "RENDER", ("rows", "width", "height"))
    rows = payload["rows"]
    if not isinstance(rows, list) or len(rows) != 2 or not all(is_int(r) for r in rows):
        raise SchemaError("RENDER rows must be [start, stop], got %r" % (rows,))
    for name in ("width", "height"):
        _check(payload, "RENDER", name, int)
    return payload


def _require(payload, what, fields):
    if not isinstance(payload, dict):
        raise SchemaError("%s must be a map, got %s" % (what, type(payload).__name__))
    missing = [name for name in fields if name not in payload]
    if missing:
        raise SchemaError("%s lacks %s" % (what, ", ".join(missing)))


def _check(payload, what, name, kinds):
    value = payload[name]
    ok = is_int(value) if kinds is int else isinstance(value, kinds) and \
        not isinstance(value, bool)
    if not ok:
        raise SchemaError("%s field %s has the wrong type: %r" % (what, name, value))


def _slots(reply, what):
    _check(reply, what, "slots", list)
    for entry in reply["slots"]:
        _require(entry, what + " slot", ("name", "dtype", "shape"))
