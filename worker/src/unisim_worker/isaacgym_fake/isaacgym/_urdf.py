"""URDF import: the URDF compiled by MuJoCo's own URDF parser, then shaped by IsaacGym's
asset options into the MJCF tree that ``_assets.AssetData`` finishes like any MJCF.

What the options do here, with their sources, is in docs/isaacgym.md ("Assumptions of the
SDK fake"): ``collapse_fixed_joints`` merges each link held by a fixed joint into its
parent unless the joint says ``dont_collapse="true"`` (legged_gym's asset config);
``density`` gives links without ``<inertial>`` their mass from their collision shapes;
``thickness`` is each shape's rest distance (MuJoCo's geom margin);
``replace_cylinder_with_capsule``; ``armature`` on every DOF. Visual elements are dropped:
the fake simulates and renders collision geometry only, so ``flip_visual_attachments``
has nothing to act on. Inertia PhysX accepts but MuJoCo rejects (zero, not positive
definite, breaking the triangle inequality) is made valid: eigenvalues raised to a floor,
then MuJoCo's ``boundmass``/``boundinertia``/``balanceinertia``.
"""

import os
import xml.etree.ElementTree as ElementTree

import mujoco
import numpy as np

from ._collapse import collapse_fixed_bodies, explicit_inertials
from ._mjcf import ImportFailure, compile_mjcf, spec_from_string

MESH_FORMATS = (".stl", ".obj", ".msh")  # what MuJoCo 3.2 loads
MIN_MASS, MIN_INERTIA = 1e-6, 1e-9  # floors for links PhysX takes massless


class JointLimits:
    """What a URDF joint's ``<limit>`` says beyond the range: its effort and velocity (None
    when absent). The range is MuJoCo's: limited only when ``lower < upper``, so anymal_c's
    drives (effort and velocity only) and continuous joints move freely."""

    def __init__(self, joint):
        limit = joint.find("limit")
        self.effort = _float(None if limit is None else limit.get("effort"))
        self.velocity = _float(None if limit is None else limit.get("velocity"))


def import_urdf(path, options):
    """The URDF at ``path`` as an MJCF tree (one root body, no free joint yet), and the
    ``JointLimits`` of each movable joint by name."""
    robot = _parse(path)
    limits = {}
    kept = set()
    masses = _masses_without_inertia(robot)
    for joint in robot.findall("joint"):
        if joint.get("type") in ("revolute", "continuous", "prismatic"):
            limits[joint.get("name")] = JointLimits(joint)
        child = joint.find("child")
        if joint.get("dont_collapse", "").lower() == "true" and child is not None:
            kept.add(child.get("link"))
    _prepare(robot, path)
    try:
        spec = spec_from_string(ElementTree.tostring(robot, encoding="unicode"))
        spec.compile()
        mjcf = spec.to_xml()
    except (ValueError, mujoco.FatalError) as exc:  # FatalError: a mju_error
        raise ImportFailure("MuJoCo's URDF compiler refused %s: %s" % (path, exc)) from exc
    tree = ElementTree.ElementTree(ElementTree.fromstring(mjcf))
    _apply_options(tree, options)
    if masses:
        _scale_density(tree, masses, path)
    if options.collapse_fixed_joints:
        explicit_inertials(tree, compile_mjcf(tree.getroot(), path))
        collapse_fixed_bodies(tree, kept)
    _sort_children(tree.getroot().find("worldbody"))
    return tree, limits


def _sort_children(element):
    """Child links in name order, depth first: the SDK's body and DOF order (anymal_c's DOFs
    are LF, LH, RF, RH there, IsaacLab #270, where its URDF says LF, RF, LH, RH; Unitree
    robots' FL, FR, RL, RR against their URDFs' FR, FL, RR, RL)."""
    children = element.findall("body")
    for child in children:
        element.remove(child)
        _sort_children(child)
    element.extend(sorted(children, key=lambda child: child.get("name")))


def _parse(path):
    if not os.path.isfile(path):
        raise ImportFailure("no such file: %s" % path)
    try:
        robot = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as exc:
        raise ImportFailure("%s is not valid XML: %s" % (path, exc)) from exc
    if robot.tag != "robot":
        raise ImportFailure("%s is not a URDF file (root element <%s>, not <robot>)"
                            % (path, robot.tag))
    return robot


def _masses_without_inertia(robot):
    """Links whose ``<inertial>`` gives a mass but no ``<inertia>`` (IsaacGymEnvs'
    cartpole.urdf), by name: MuJoCo refuses them; here they lose the ``<inertial>`` and get
    the inertia of their collision shapes at that mass (``_scale_density``)."""
    masses = {}
    for link in robot.findall("link"):
        inertial = link.find("inertial")
        if inertial is not None and inertial.find("inertia") is None:
            mass = inertial.find("mass")
            if mass is not None:
                masses[link.get("name")] = float(mass.get("value", "0"))
            link.remove(inertial)
    return masses


def _scale_density(tree, masses, path):
    """Give each body in ``masses`` that mass: its shapes' density scaled to it, or, when it
    has no volume, the mass alone with the floor inertia."""
    model = compile_mjcf(tree.getroot(), path)
    for body in tree.getroot().find("worldbody").iter("body"):
        name = body.get("name")
        if name not in masses:
            continue
        current = float(model.body(name).mass[0])
        geoms = body.findall("geom")
        if geoms and current > 2 * MIN_MASS:
            for geom in geoms:
                geom.set("density", repr(float(geom.get("density")) * masses[name] / current))
        else:
            body.insert(0, ElementTree.Element("inertial", {
                "pos": "0 0 0", "mass": repr(max(masses[name], MIN_MASS)),
                "diaginertia": " ".join([repr(MIN_INERTIA)] * 3)}))


def _prepare(robot, path):
    """Drop visuals, name the collision shapes, resolve mesh paths, set MuJoCo's compiler."""
    for element in robot.findall("mujoco"):
        robot.remove(element)
    for link in robot.findall("link"):
        for visual in link.findall("visual"):
            link.remove(visual)
        for k, collision in enumerate(link.findall("collision")):
            collision.set("name", collision.get("name") or "%s_collision%d" % (link.get("name"), k))
    for inertia in robot.iter("inertia"):
        _repair_inertia(inertia)
    for mesh in robot.iter("mesh"):
        mesh.set("filename", _mesh_file(mesh.get("filename", ""), path))
    extension = ElementTree.Element("mujoco")
    ElementTree.SubElement(extension, "compiler", {
        "fusestatic": "false", "strippath": "false",
        "balanceinertia": "true", "boundmass": repr(MIN_MASS),
        "boundinertia": repr(MIN_INERTIA)})
    robot.insert(0, extension)


def _repair_inertia(inertia):
    """A tensor with eigenvalues <= 0 (anymal_c's hatch, cassie's base: PhysX loads them)
    gets those raised to the floor, so that MuJoCo takes it."""
    names = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
    xx, yy, zz, xy, xz, yz = (float(inertia.get(name, "0")) for name in names)
    tensor = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    values, vectors = np.linalg.eigh(tensor)
    if values.min() > MIN_INERTIA:
        return
    tensor = vectors @ np.diag(np.maximum(values, MIN_INERTIA)) @ vectors.T
    repaired = (tensor[0, 0], tensor[1, 1], tensor[2, 2], tensor[0, 1], tensor[0, 2], tensor[1, 2])
    for name, value in zip(names, repaired):
        inertia.set(name, repr(float(value)))


def _mesh_file(name, urdf_path):
    """A mesh reference as an absolute path: the first that exists of the path (for
    ``package://<pkg>/<rest>``: ``<pkg>/<rest>``, then ``<rest>``) taken in the URDF's folder
    and then in each folder above it. IsaacGymEnvs' kuka.urdf and ycb objects name meshes
    relative to the folder above theirs, and load on the SDK."""
    if name.startswith("package://"):
        package, _, rest = name[len("package://"):].partition("/")
        names = [os.path.join(package, rest), rest]
    else:
        names = [name]
    folders = [os.path.dirname(os.path.abspath(urdf_path))]
    while os.path.dirname(folders[-1]) != folders[-1]:
        folders.append(os.path.dirname(folders[-1]))
    candidates = [os.path.join(folder, n) for folder in folders for n in names]
    found = next((c for c in candidates if os.path.isfile(c)), None)
    if found is None:
        raise ImportFailure("%s: mesh %s not found (looked at %s)"
                            % (urdf_path, name, ", ".join(candidates[:4])))
    if not found.lower().endswith(MESH_FORMATS):
        raise ImportFailure("%s: collision mesh %s is not one MuJoCo loads (%s); convert it "
                            "to .stl or .obj" % (urdf_path, found, ", ".join(MESH_FORMATS)))
    return os.path.abspath(found)


def _apply_options(tree, options):
    """Density, thickness, capsules, armature and the floors on the compiled tree."""
    root = tree.getroot()
    margin = "%r" % float(options.thickness)
    for geom in root.iter("geom"):
        geom.set("density", "%r" % float(options.density))
        geom.set("margin", margin)
        if options.replace_cylinder_with_capsule and geom.get("type") == "cylinder":
            geom.set("type", "capsule")  # same radius, same cylindrical part: size unchanged
    for joint in root.iter("joint"):
        joint.attrib.pop("actuatorfrcrange", None)  # effort is a DOF property, applied by drives
        joint.set("armature", "%r" % float(options.armature))
    compiler = root.find("compiler")
    compiler.set("balanceinertia", "true")
    compiler.set("boundmass", repr(MIN_MASS))
    compiler.set("boundinertia", repr(MIN_INERTIA))


def _float(text):
    return None if text is None else float(text)
