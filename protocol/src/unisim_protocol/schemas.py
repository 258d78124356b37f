"""Every message's fields, spelled here only: ``FIELDS`` holds each request's and each
unsolicited message's fields with their types and defaults; builders of the payloads with
structure (INIT's reply, a physics or render layout; ATTACH's, CAPTURE's and RENDER's
requests) sit beside it.

The host builds a request with ``request(name, **fields)``, which refuses a field the
table does not list; the worker reads one with ``read(name, payload)``, which checks each
listed field's type and fills in its default (a field not listed is ignored, so an older
worker still reads a newer host's request). Parsers raise ``SchemaError`` naming the
field. PROTOCOL.md documents every field (tests/test_protocol_doc.py checks it).
Python 3.8, stdlib only.
"""

from typing import Any, Dict, Tuple

from .messages import MessageError, is_int

REQUIRED = object()  # a field without a default
MAP, LIST, NUMBER = dict, list, (int, float)
NIL = type(None)

# name -> {field: (types, default)}; a request's fields under its command's name.
FIELDS: Dict[str, Dict[str, Tuple[Any, Any]]] = {
    "HELLO": {"protocol": (int, REQUIRED), "python": (str, REQUIRED), "numpy": (str, REQUIRED),
              "engines": (LIST, REQUIRED), "pid": (int, REQUIRED)},
    "PROGRESS": {"done": (NUMBER, REQUIRED), "total": (NUMBER, REQUIRED), "text": (str, "")},
    "ERROR": {"type": (str, REQUIRED), "message": (str, REQUIRED), "traceback": (str, ""),
              "faulted": (bool, False)},
    "DESCRIBE": {"engine": (str, REQUIRED), "options": (MAP, {}), "num_envs": (int, 1)},
    "INIT": {"engine": (str, REQUIRED), "num_envs": (int, REQUIRED), "first_env": (int, 0),
             "total_envs": ((int, NIL), None), "model": ((str, NIL), None),
             "keyframe": ((str, NIL), None), "threads": (int, 1), "options": (MAP, {}),
             "physics": ((MAP, NIL), None), "queue": ((MAP, NIL), None),
             "device": ((MAP, NIL), None), "data_plane": (str, "shm")},
    "ATTACH": {"arena": (MAP, REQUIRED), "cuda": ((MAP, NIL), None)},
    "STEP": {"substeps": (int, 1)},
    "RESET": {"qpos": (bool, False), "qvel": (bool, False), "physics": (bool, False)},
    "CAPTURE": {"env_id": (int, REQUIRED), "camera": ((str, int, NIL), None),
                "width": (int, REQUIRED), "height": (int, REQUIRED), "image": (MAP, REQUIRED)},
    "PING": {},
    "SHUTDOWN": {},
    "DOORBELL": {"spin_us": ((int, float, NIL), None), "spare_core": (bool, True)},
    "PHYSICS": {"parameters": (bool, False), "push": (bool, False)},
    "RENDER": {"rows": (LIST, REQUIRED), "width": (int, REQUIRED), "height": (int, REQUIRED),
               "camera": ((str, int, NIL), None), "depth": (bool, False),
               "randomize": (bool, False), "call": (int, 0), "source": ((MAP, NIL), None)},
}

PHYSICS_LAYOUT = ("engine", "engine_version", "stepper", "num_envs", "nq", "nv", "nu", "nbody",
                  "timestep", "joint_names", "actuator_names", "body_names", "keyframes",
                  "ctrl_range", "slots")
RENDER_LAYOUT = ("engine", "engine_version", "nq", "nmocap", "cameras", "qpos0", "mocap_pos0",
                 "mocap_quat0", "slots")


class SchemaError(MessageError):
    """A payload that lacks a field, or has one of the wrong type."""


def request(name, **fields):
    """The payload of message ``name`` (host side): its fields, checked against ``FIELDS``."""
    schema = FIELDS[name]
    unknown = sorted(set(fields) - set(schema))
    if unknown:
        raise SchemaError("%s has no field %s; its fields: %s"
                          % (name, ", ".join(unknown), ", ".join(schema) or "none"))
    return read(name, fields)


def read(name, payload):
    """Message ``name``'s listed fields from ``payload``, each checked to have its type
    (bool is not an int here), defaults filled in."""
    if not isinstance(payload, dict):
        raise SchemaError("%s must be a map, got %s" % (name, type(payload).__name__))
    found = {}
    for field, (kinds, default) in FIELDS[name].items():
        if field not in payload:
            if default is REQUIRED:
                raise SchemaError("%s lacks %s" % (name, field))
            found[field] = type(default)(default) if isinstance(default, (dict, list)) \
                else default  # a fresh map or list: a reader may change its own
            continue
        value = payload[field]
        if not _is(value, kinds):
            raise SchemaError("%s %s must be %s, got %r" % (name, field, _names(kinds), value))
        found[field] = value
    return found


def _is(value, kinds):
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)


def _names(kinds):
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    return " or ".join("nil" if k is NIL else "map" if k is MAP else k.__name__ for k in kinds)


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
    return request("ATTACH", arena=arena, cuda=cuda)


def parse_attach_request(payload):
    """``(arena declaration, cuda declaration or None)``."""
    fields = read("ATTACH", payload)
    _require(fields["arena"], "ATTACH arena", ("name", "size", "slots"))
    return fields["arena"], fields["cuda"]


def capture_request(env_id, camera, width, height, image):
    """CAPTURE: draw env ``env_id`` (a row of the worker's slots) from ``camera`` (a name,
    an id or None for the free camera) into the image arena declared by ``image``."""
    return request("CAPTURE", env_id=int(env_id), camera=camera, width=int(width),
                   height=int(height), image=image)


def parse_capture_request(payload):
    return read("CAPTURE", payload)


def render_request(rows, width, height, camera, depth, randomize, call, source):
    """RENDER: draw rows ``[start, stop)`` of the state slots (or of ``source``, another
    arena's qpos) into the same rows of the image slots; ``call`` seeds randomisation."""
    return request("RENDER", rows=[int(rows[0]), int(rows[1])], width=int(width),
                   height=int(height), camera=camera, depth=bool(depth),
                   randomize=bool(randomize), call=int(call), source=source)


def parse_render_request(payload):
    fields = read("RENDER", payload)
    rows = fields["rows"]
    if len(rows) != 2 or not all(is_int(r) for r in rows):
        raise SchemaError("RENDER rows must be [start, stop], got %r" % (rows,))
    return fields


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
