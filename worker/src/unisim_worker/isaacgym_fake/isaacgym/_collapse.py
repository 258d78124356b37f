"""``collapse_fixed_joints`` on an MJCF tree: each body without a joint (a URDF link held
by a fixed joint) is merged into its parent, its shapes and children moved into the
parent's frame and its mass, centre of mass and inertia added to the parent's, unless its
link is one a ``dont_collapse="true"`` joint holds (legged_gym's anymal_c keeps its feet
so). MuJoCo's own ``fusestatic`` has no such exception, hence this pass.
"""

from xml.etree.ElementTree import Element

import mujoco
import numpy as np

from ._mjcf import ImportFailure

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
ORIENTATIONS = ("axisangle", "euler", "xyaxes", "zaxis")


def explicit_inertials(tree, model):
    """Write each body's compiled mass, centre of mass and principal inertia into the tree,
    so that merging needs no geometry (links without ``<inertial>`` get theirs from their
    shapes' density, as MuJoCo computed them)."""
    for body in tree.getroot().find("worldbody").iter("body"):
        compiled = model.body(body.get("name"))
        for old in body.findall("inertial"):
            body.remove(old)
        body.insert(0, Element("inertial", {
            "pos": _text(compiled.ipos), "quat": _text(compiled.iquat),
            "mass": repr(float(compiled.mass[0])), "diaginertia": _text(compiled.inertia)}))


def collapse_fixed_bodies(tree, kept):
    """Merge every jointless body whose name is not in ``kept`` into its parent."""
    for root in tree.getroot().find("worldbody").findall("body"):
        _collapse_into(root, kept)


def _collapse_into(body, kept):
    index = 0
    while index < len(body):
        child = body[index]
        if child.tag != "body":
            index += 1
        elif child.find("joint") is None and child.find("freejoint") is None \
                and child.get("name") not in kept:
            _merge(body, child, index)  # its elements now sit at ``index``: look again
        else:
            _collapse_into(child, kept)
            index += 1


def _merge(parent, child, index):
    position, quat = _pose(child)
    rotation = _matrix(quat)
    inertial = child.find("inertial")
    _add_inertial(parent, _inertia(inertial, position, rotation))
    parent.remove(child)
    for element in [e for e in child if e is not inertial]:
        own_position, own_quat = _pose(element)
        element.set("pos", _text(position + rotation @ own_position))
        combined = np.zeros(4)
        mujoco.mju_mulQuat(combined, quat, own_quat)
        element.set("quat", _text(combined))
        parent.insert(index, element)
        index += 1


def _add_inertial(body, added):
    """The body's inertial plus ``added`` (mass, centre, 3x3 tensor in the body frame)."""
    current = body.find("inertial")
    parts = [added] if current is None else [_inertia(current, np.zeros(3), np.eye(3)), added]
    if current is not None:
        body.remove(current)
    mass = sum(m for m, _, _ in parts)
    centre = sum(m * c for m, c, _ in parts) / mass
    tensor = np.zeros((3, 3))
    for m, c, own in parts:
        d = c - centre
        tensor += own + m * (d @ d * np.eye(3) - np.outer(d, d))  # parallel axis theorem
    body.insert(0, Element("inertial", {
        "pos": _text(centre), "mass": repr(float(mass)),
        "fullinertia": _text([tensor[0, 0], tensor[1, 1], tensor[2, 2], tensor[0, 1],
                              tensor[0, 2], tensor[1, 2]])}))


def _inertia(inertial, position, rotation):
    """(mass, centre, tensor) of an ``<inertial>``, in the frame given by ``position`` and
    ``rotation`` of its body."""
    centre, quat = _pose(inertial)
    frame = rotation @ _matrix(quat)
    if inertial.get("fullinertia") is not None:
        xx, yy, zz, xy, xz, yz = _vector(inertial.get("fullinertia"))
        own = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    else:
        own = np.diag(_vector(inertial.get("diaginertia")))
    return (float(inertial.get("mass")), position + rotation @ centre,
            frame @ own @ frame.T)


def _pose(element):
    for name in ORIENTATIONS:
        if element.get(name) is not None:
            raise ImportFailure("collapse_fixed_joints: <%s %s=...> in the compiled model; the "
                                "fake merges bodies posed by pos and quat only"
                                % (element.tag, name))
    position = _vector(element.get("pos", "0 0 0"))
    quat = _vector(element.get("quat")) if element.get("quat") else IDENTITY
    return position, quat / np.linalg.norm(quat)


def _matrix(quat):
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, np.asarray(quat, dtype=np.float64))
    return rotation.reshape(3, 3)


def _vector(text):
    return np.array([float(v) for v in text.split()])


def _text(values):
    return " ".join(repr(float(v)) for v in values)
