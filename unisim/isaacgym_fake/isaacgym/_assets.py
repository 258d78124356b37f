"""``load_asset`` for MJCF: what IsaacGym's importer keeps of a file, compiled by MuJoCo.

The adapter's own error text and docs/isaacgym.md list the importer's limits (one root
body in <worldbody>, no <include>, primitive geoms); the fake enforces the first two.
What the importer drops (the static geoms of <worldbody>, actuators, sensors, keyframes,
tendons) is dropped here too; each DOF gets a MuJoCo actuator that the fake drives as
the DOF's drive mode says (``_actors``).
"""

import os
import xml.etree.ElementTree as ElementTree

import mujoco
import numpy as np

from ._types import DOF_PROPERTIES

DRIVE_PREFIX = "__fake_drive_"
GROUND = "__fake_ground"
F32_MAX = float(np.finfo(np.float32).max)
DROPPED_SECTIONS = ("actuator", "sensor", "keyframe", "tendon", "equality")


class ImportFailure(Exception):
    """The importer refused a file; ``load_asset`` prints this and returns None."""


class AssetData:
    """An imported MJCF: its edited XML, and what gymapi reports of it."""

    def __init__(self, path, options):
        self.path = path
        self.fix_base_link = bool(options.fix_base_link)
        self.disable_gravity = bool(options.disable_gravity)
        self.default_drive_mode = int(options.default_dof_drive_mode)
        self.tree, self.actuator_names = _edit(path, self.fix_base_link)
        self._compiled = {}
        model = self.compile(None)
        # as ints: MuJoCo's enums do not compare equal to numpy ints in every version
        kinds = [int(t) for t in model.jnt_type]
        hinge, slide = int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)
        if int(mujoco.mjtJoint.mjJNT_BALL) in kinds:
            raise ImportFailure("%s has a ball joint; the fake imports hinge and slide joints "
                                "only" % path)
        self.free = bool(kinds) and kinds[0] == int(mujoco.mjtJoint.mjJNT_FREE)
        joints = [j for j, kind in enumerate(kinds) if kind in (hinge, slide)]
        self.dof_joints = joints
        self.dof_names = [model.joint(j).name for j in joints]
        if "" in self.dof_names or len(set(self.dof_names)) != len(self.dof_names):
            raise ImportFailure("%s has unnamed or duplicate joint names %s; the fake needs a "
                                "unique name per joint" % (path, self.dof_names))
        actuators = ElementTree.SubElement(self.tree.getroot(), "actuator")
        for name in self.dof_names:
            ElementTree.SubElement(actuators, "general", {
                "name": DRIVE_PREFIX + name, "joint": name, "gaintype": "fixed",
                "gainprm": "0", "biastype": "affine", "biasprm": "0 0 0",
                "ctrllimited": "false", "forcelimited": "false"})
        self._compiled = {}
        model = self.compile(None)
        self.body_names = [model.body(b).name or "body%d" % b for b in range(1, model.nbody)]
        self.shape_count = int(np.sum(model.geom_bodyid > 0))
        # friction per shape, for actors created from now on (set_asset_rigid_shape_properties)
        self.shape_friction = model.geom_friction[model.geom_bodyid > 0, 0].copy()
        self.default_props = self._default_props(model)

    def _default_props(self, model):
        """DOF properties as imported: limits, armature and friction from the MJCF, the
        asset options' drive mode, no drive gains."""
        props = np.zeros(len(self.dof_joints), dtype=DOF_PROPERTIES)
        for k, joint in enumerate(self.dof_joints):
            dof = model.jnt_dofadr[joint]
            props[k]["hasLimits"] = bool(model.jnt_limited[joint])
            props[k]["lower"], props[k]["upper"] = model.jnt_range[joint] \
                if model.jnt_limited[joint] else (0.0, 0.0)
            props[k]["driveMode"] = self.default_drive_mode
            props[k]["velocity"] = 64.0
            props[k]["effort"] = F32_MAX
            props[k]["armature"] = model.dof_armature[dof]
            props[k]["friction"] = model.dof_frictionloss[dof]
        return props

    def compile(self, ground):
        """The MjModel of one actor of this asset, with the sim's ground plane (or None)."""
        key = None if ground is None else tuple(ground)
        if key not in self._compiled:
            tree = ElementTree.ElementTree(ElementTree.fromstring(
                ElementTree.tostring(self.tree.getroot())))
            if ground is not None:
                distance, friction, _restitution = ground
                ElementTree.SubElement(tree.getroot().find("worldbody"), "geom", {
                    "name": GROUND, "type": "plane", "size": "0 0 1",
                    "pos": "0 0 %r" % -distance, "friction": "%r 0.005 0.0001" % friction,
                    "rgba": "0.3 0.35 0.4 1", "contype": str(0x7FFFFFFF),
                    "conaffinity": str(0x7FFFFFFF)})
            xml = ElementTree.tostring(tree.getroot(), encoding="unicode")
            try:
                self._compiled[key] = mujoco.MjModel.from_xml_string(xml)
            except ValueError as exc:
                raise ImportFailure("MuJoCo could not compile %s: %s" % (self.path, exc)) from exc
        return self._compiled[key]


def _edit(path, fix_base_link):
    """The MJCF at ``path`` as IsaacGym's importer keeps it; the MJCF's actuator names."""
    if not os.path.isfile(path):
        raise ImportFailure("no such file: %s" % path)
    try:
        tree = ElementTree.parse(path)
    except ElementTree.ParseError as exc:
        raise ImportFailure("%s is not valid XML: %s" % (path, exc)) from exc
    root = tree.getroot()
    if root.tag != "mujoco":
        raise ImportFailure("%s is not an MJCF file (root element <%s>)" % (path, root.tag))
    if list(root.iter("include")):
        raise ImportFailure("%s uses <include>, which the MJCF importer does not follow" % path)
    worldbody = root.find("worldbody")
    bodies = [] if worldbody is None else worldbody.findall("body")
    if len(bodies) != 1:
        raise ImportFailure("%s has %d bodies in <worldbody>; the MJCF importer takes one "
                            "root body" % (path, len(bodies)))
    for child in list(worldbody):
        if child.tag not in ("body", "light"):
            worldbody.remove(child)  # the static world: the importer keeps the robot only
    actuator_names = []
    for section in DROPPED_SECTIONS:
        for element in root.findall(section):
            if section == "actuator":
                actuator_names += [a.get("name", "") for a in element]
            root.remove(element)
    for element in root.findall("contact"):
        for pair in element.findall("pair"):
            element.remove(pair)
    robot = bodies[0]
    free = [j for j in list(robot) if j.tag == "freejoint"
            or (j.tag == "joint" and j.get("type") == "free")]
    if fix_base_link:
        for joint in free:
            robot.remove(joint)
    elif not free:
        robot.insert(0, ElementTree.Element("freejoint", {"name": "__fake_root"}))
    directory = os.path.dirname(os.path.abspath(path))
    compiler = root.find("compiler")
    if compiler is None:
        compiler = ElementTree.SubElement(root, "compiler")
    for attribute in ("meshdir", "texturedir"):
        base = compiler.get(attribute) or compiler.get("assetdir") or ""
        compiler.set(attribute, os.path.join(directory, base))
    compiler.attrib.pop("assetdir", None)
    option = root.find("option")
    if option is None:
        option = ElementTree.SubElement(root, "option")
    option.set("integrator", "implicitfast")  # drives are implicit in PhysX: keep them stable
    return tree, actuator_names
