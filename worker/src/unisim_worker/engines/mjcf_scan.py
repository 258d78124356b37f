"""What an MJCF file says about joints, actuators, bodies and keyframes, read by us.

IsaacGym's MJCF importer drops or reinterprets several attributes (actuator gains, joint
damping and friction loss, ranges in degrees, keyframes, gravity, timestep), and it may
reorder joints. So the IsaacGym engine takes these values from this scan and writes them
onto the imported asset by name. Pure stdlib + numpy, Python 3.8: unit-tested on the host.

Supported subset: ``<default>`` classes (``class``/``childclass``), ``<compiler angle
autolimits>``, ``<option timestep gravity>``, hinge/slide/free joints, ``position`` and
``motor`` actuators on joints, ``<key>`` frames. Anything else that changes these numbers
is refused with an error that says what to change.
"""

import math
import os
import xml.etree.ElementTree as ET
from typing import Dict, List, Optional

import numpy as np

DOF_JOINTS = ("hinge", "slide")
ACTUATORS = ("position", "motor")
IMPORTABLE_GEOMS = ("sphere", "capsule", "box", "cylinder", "ellipsoid")


class MjcfError(ValueError):
    """The MJCF uses something this scan (or IsaacGym's importer) cannot represent."""


class Joint:
    """A joint, in SI units (ranges of hinges in radians)."""

    def __init__(self, name, kind, body, limited, lower, upper, damping, armature,
                 frictionloss, stiffness, ref):
        self.name = name
        self.kind = kind
        self.body = body
        self.limited = limited
        self.lower = lower
        self.upper = upper
        self.damping = damping
        self.armature = armature
        self.frictionloss = frictionloss
        self.stiffness = stiffness
        self.ref = ref


class Actuator:
    """A ``position`` (ctrl = target) or ``motor`` (force = gear * ctrl) actuator."""

    def __init__(self, name, kind, joint, gear, kp, kv, ctrl_range, force_range):
        self.name = name
        self.kind = kind
        self.joint = joint
        self.gear = gear
        self.kp = kp
        self.kv = kv
        self.ctrl_range = ctrl_range  # (lo, hi) or None when not limited
        self.force_range = force_range  # (lo, hi) or None when not limited


class MjcfScan:
    """Everything the IsaacGym engine needs from one MJCF file."""

    def __init__(self, path, timestep, gravity, root_body, root_pos, root_quat, free_root,
                 joints, actuators, bodies, keyframes, excludes, warnings):
        self.path = path
        self.timestep = timestep
        self.gravity = gravity
        self.root_body = root_body
        self.root_pos = root_pos
        self.root_quat = root_quat  # wxyz, as MuJoCo writes it
        self.free_root = free_root
        self.joints = joints  # document order; the free joint first when there is one
        self.actuators = actuators
        self.bodies = bodies  # document order, without the world body
        self.keyframes = keyframes  # {name: {"qpos": array, "qvel": array}}
        self.excludes = excludes  # [(body1, body2)] from <contact><exclude>
        self.warnings = warnings

    @property
    def dof_joints(self):
        """The single-DOF joints, in document order: the columns after the free root."""
        return [joint for joint in self.joints if joint.kind in DOF_JOINTS]

    @property
    def nq(self):
        return (7 if self.free_root else 0) + len(self.dof_joints)

    @property
    def nv(self):
        return (6 if self.free_root else 0) + len(self.dof_joints)

    def qpos0(self):
        """MuJoCo's default qpos: the root body's pose, then each joint's ``ref``."""
        head = list(self.root_pos) + list(self.root_quat) if self.free_root else []
        return np.array(head + [joint.ref for joint in self.dof_joints], dtype=np.float64)

    def initial_state(self, keyframe):
        """``(qpos, qvel)`` of keyframe ``keyframe`` (a name) or the default pose if None."""
        if keyframe is None:
            return self.qpos0(), np.zeros(self.nv)
        if keyframe not in self.keyframes:
            raise MjcfError("model %s has no keyframe %r; its keyframes: %s"
                            % (self.path, keyframe, sorted(self.keyframes) or "none"))
        key = self.keyframes[keyframe]
        return key["qpos"], key["qvel"]


def _floats(text, count, what):
    values = [float(v) for v in text.split()]
    if len(values) != count:
        raise MjcfError("%s must have %d numbers, got %r" % (what, count, text))
    return values


def _flag(value, what):
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    if value == "auto":
        return None
    raise MjcfError("%s must be true, false or auto, got %r" % (what, value))


class _Defaults:
    """MJCF default classes: attribute lookup along the class chain up to ``main``."""

    def __init__(self, root):
        self.classes: Dict[str, Dict[str, Dict[str, str]]] = {"main": {}}
        self.parent: Dict[str, Optional[str]] = {"main": None}
        top = root.find("default")
        if top is not None:
            self._collect(top, "main", None)

    def _collect(self, element, name, parent):
        self.classes[name] = {child.tag: dict(child.attrib) for child in element
                              if child.tag != "default"}
        self.parent[name] = parent
        for child in element.findall("default"):
            if "class" not in child.attrib:
                raise MjcfError("nested <default> needs a class attribute")
            self._collect(child, child.attrib["class"], name)

    def get(self, element, tag, cls, attribute, fallback):
        if attribute in element.attrib:
            return element.attrib[attribute]
        if cls not in self.classes:
            raise MjcfError("<%s> uses undefined default class %r" % (tag, cls))
        while cls is not None:
            values = self.classes[cls].get(tag, {})
            if attribute in values:
                return values[attribute]
            cls = self.parent[cls]
        return fallback


def scan(source, base_dir=None):
    """Scan an MJCF path or XML string into an ``MjcfScan``."""
    if source.lstrip().startswith("<"):
        path = "<xml string>"
        root = ET.fromstring(source)
    else:
        path = os.path.abspath(os.path.join(base_dir or os.getcwd(), source))
        if not os.path.isfile(path):
            raise MjcfError("MJCF file %s does not exist" % path)
        root = ET.parse(path).getroot()
    if root.tag != "mujoco":
        raise MjcfError("%s is not MJCF: its root element is <%s>, not <mujoco>" % (path, root.tag))
    if root.find(".//include") is not None:
        raise MjcfError("%s uses <include>; inline the included files into one MJCF for "
                        "IsaacGym's importer" % path)
    return _Scanner(path, root).scene()


class _Scanner:
    def __init__(self, path, root):
        self.path = path
        self.root = root
        self.defaults = _Defaults(root)
        compiler = root.find("compiler")
        attrib = compiler.attrib if compiler is not None else {}
        self.degrees = attrib.get("angle", "degree") == "degree"
        self.autolimits = _flag(attrib.get("autolimits", "true"), "compiler autolimits")
        self.warnings = []

    def scene(self):
        option = self.root.find("option")
        attrib = option.attrib if option is not None else {}
        timestep = float(attrib.get("timestep", "0.002"))
        gravity = _floats(attrib.get("gravity", "0 0 -9.81"), 3, "option gravity")
        if not (timestep > 0 and math.isfinite(timestep)):
            raise MjcfError("option timestep must be positive, got %r" % timestep)
        worldbody = self.root.find("worldbody")
        roots = worldbody.findall("body") if worldbody is not None else []
        if len(roots) != 1:
            raise MjcfError(
                "%s has %d bodies directly under <worldbody>; IsaacGym's MJCF importer needs "
                "exactly one root body: put the others inside it or in separate models"
                % (self.path, len(roots)))
        for geom in worldbody.findall("geom"):
            self.warnings.append("worldbody geom %r (%s) is not imported; the engine adds "
                                 "its own ground plane" % (geom.get("name", ""),
                                                           geom.get("type", "sphere")))
        root = roots[0]
        joints: List[Joint] = []
        bodies: List[str] = []
        self._walk(root, "main", joints, bodies)
        free = [joint for joint in joints if joint.kind == "free"]
        if free and joints[0] is not free[0]:
            raise MjcfError("the free joint %r must belong to the root body %r"
                            % (free[0].name, bodies[0]))
        actuators = self._actuators({joint.name: joint for joint in joints})
        scene = MjcfScan(
            path=self.path, timestep=timestep, gravity=gravity, root_body=bodies[0],
            root_pos=_floats(root.get("pos", "0 0 0"), 3, "root body pos"),
            root_quat=self._root_quat(root), free_root=bool(free), joints=joints,
            actuators=actuators, bodies=bodies, keyframes={}, excludes=self._excludes(),
            warnings=self.warnings)
        scene.keyframes = self._keyframes(scene)
        return scene

    def _root_quat(self, body):
        for other in ("euler", "axisangle", "xyaxes", "zaxis"):
            if other in body.attrib:
                raise MjcfError("root body %r gives its orientation as %s; write it as quat= "
                                "(w x y z) for the IsaacGym engine" % (body.get("name"), other))
        quat = np.array(_floats(body.get("quat", "1 0 0 0"), 4, "root body quat"))
        norm = np.linalg.norm(quat)
        if norm == 0:
            raise MjcfError("root body quat must not be zero")
        return (quat / norm).tolist()

    def _walk(self, body, childclass, joints, bodies):
        name = body.get("name")
        if not name:
            raise MjcfError("every body needs a name (IsaacGym maps bodies by name); "
                            "an unnamed body is at depth %d" % len(bodies))
        bodies.append(name)
        childclass = body.get("childclass", childclass)
        for element in body:
            if element.tag in ("joint", "freejoint"):
                joints.append(self._joint(element, name, childclass))
            elif element.tag == "geom":
                self._check_geom(element, name, childclass)
            elif element.tag == "body":
                self._walk(element, childclass, joints, bodies)

    def _check_geom(self, geom, body, childclass):
        kind = self.defaults.get(geom, "geom", geom.get("class", childclass), "type", "sphere")
        if kind not in IMPORTABLE_GEOMS:
            raise MjcfError("body %r has a %s geom; IsaacGym's MJCF importer supports "
                            "primitive shapes only (%s)"
                            % (body, kind, ", ".join(IMPORTABLE_GEOMS)))

    def _joint(self, element, body, childclass):
        name = element.get("name")
        if not name:
            raise MjcfError("every joint needs a name (the IsaacGym engine maps DOFs by name); "
                            "body %r has an unnamed joint" % body)
        if element.tag == "freejoint":
            return Joint(name, "free", body, False, -np.inf, np.inf, 0.0, 0.0, 0.0, 0.0, 0.0)
        cls = element.get("class", childclass)

        def get(attribute, fallback):
            return self.defaults.get(element, "joint", cls, attribute, fallback)

        kind = get("type", "hinge")
        if kind == "free":
            return Joint(name, "free", body, False, -np.inf, np.inf, 0.0, 0.0, 0.0, 0.0, 0.0)
        if kind not in DOF_JOINTS:
            raise MjcfError("joint %r is a %s joint; the IsaacGym engine supports hinge, slide "
                            "and free joints" % (name, kind))
        scale = math.pi / 180.0 if kind == "hinge" and self.degrees else 1.0
        text = get("range", None)
        lower, upper = _floats(text, 2, "joint %r range" % name) if text else (0.0, 0.0)
        limited = _flag(get("limited", "auto"), "joint %r limited" % name)
        if limited is None:
            limited = text is not None if self.autolimits else False
        stiffness = float(get("stiffness", "0"))
        if stiffness != 0.0:
            self.warnings.append("joint %r: spring stiffness %g is not reproduced by IsaacGym"
                                 % (name, stiffness))
        if limited:
            lower, upper = lower * scale, upper * scale
        else:
            lower, upper = -np.inf, np.inf
        return Joint(name, kind, body, bool(limited), lower, upper,
                     float(get("damping", "0")), float(get("armature", "0")),
                     float(get("frictionloss", "0")), stiffness,
                     float(get("ref", "0")) * scale)

    def _actuators(self, joints):
        section = self.root.find("actuator")
        actuators = []
        for element in (section if section is not None else []):
            if element.tag not in ACTUATORS:
                raise MjcfError("actuator <%s %s> is not supported by the IsaacGym engine; use "
                                "position or motor actuators"
                                % (element.tag, element.get("name", "")))
            actuators.append(self._actuator(element, joints))
        return actuators

    def _actuator(self, element, joints):
        kind = element.tag
        cls = element.get("class", "main")

        def get(attribute, fallback):
            return self.defaults.get(element, kind, cls, attribute, fallback)

        joint = element.get("joint")
        name = element.get("name") or joint
        if joint is None:
            raise MjcfError("actuator %r must act on a joint (joint=...); tendon, site and body "
                            "transmissions are not supported by the IsaacGym engine" % name)
        if joint not in joints or joints[joint].kind not in DOF_JOINTS:
            raise MjcfError("actuator %r acts on %r, which is not a hinge or slide joint"
                            % (name, joint))
        gear = float(get("gear", "1").split()[0])
        if kind == "position" and gear != 1.0:
            raise MjcfError("position actuator %r has gear %g; IsaacGym position drives have "
                            "no gear: use gear=1" % (name, gear))
        # ctrlrange is never converted by <compiler angle>: targets are in radians/meters.
        return Actuator(name, kind, joint, gear, float(get("kp", "1")), float(get("kv", "0")),
                        self._range(get, "ctrl", name), self._range(get, "force", name))

    def _range(self, get, prefix, name):
        text = get(prefix + "range", None)
        limited = _flag(get(prefix + "limited", "auto"), "actuator %r %slimited" % (name, prefix))
        if limited is None:
            limited = text is not None if self.autolimits else False
        if not limited:
            return None
        if text is None:
            raise MjcfError("actuator %r is %slimited but has no %srange" % (name, prefix, prefix))
        lower, upper = _floats(text, 2, "actuator %r %srange" % (name, prefix))
        if not lower <= upper:
            raise MjcfError("actuator %r has an inverted %srange [%g, %g]"
                            % (name, prefix, lower, upper))
        return lower, upper

    def _excludes(self):
        contact = self.root.find("contact")
        if contact is None:
            return []
        return [(e.get("body1"), e.get("body2")) for e in contact.findall("exclude")]

    def _keyframes(self, scene):
        section = self.root.find("keyframe")
        keyframes = {}
        for index, key in enumerate(section.findall("key") if section is not None else []):
            name = key.get("name") or "key%d" % index
            qpos = scene.qpos0()
            qvel = np.zeros(scene.nv)
            if "qpos" in key.attrib:
                qpos = np.array(_floats(key.get("qpos"), scene.nq, "keyframe %r qpos" % name))
            if "qvel" in key.attrib:
                qvel = np.array(_floats(key.get("qvel"), scene.nv, "keyframe %r qvel" % name))
            keyframes[name] = {"qpos": qpos, "qvel": qvel}
        return keyframes
