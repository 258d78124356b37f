"""MJCF as IsaacGym's importer keeps it, and the edits every imported tree gets.

One root body in <worldbody> (the adapter's own limits, in docs/isaacgym.md, are
stricter: no <include>, primitive geoms); <include> is followed as MuJoCo follows it.
What the importer drops (the static geoms of <worldbody>, actuators, sensors, keyframes,
spatial tendons) is dropped here too; fixed tendons are kept (``_tendons``).
"""

import os
import xml.etree.ElementTree as ElementTree

import mujoco

from ._errors import log_warning

ROOT_JOINT = "__fake_root"
MESH_FORMATS = (".stl", ".obj", ".msh")  # what MuJoCo 3.2 loads


class ImportFailure(Exception):
    """The importer refused a file; ``load_asset`` prints this and returns None."""


def read_mjcf(path):
    """The MJCF at ``path`` as IsaacGym's importer keeps it; its actuators (``_actuators``)."""
    if not os.path.isfile(path):
        raise ImportFailure("no such file: %s" % path)
    try:
        tree = ElementTree.parse(path)
    except ElementTree.ParseError as exc:
        raise ImportFailure("%s is not valid XML: %s" % (path, exc)) from exc
    root = tree.getroot()
    if root.tag != "mujoco":
        raise ImportFailure("%s is not an MJCF file (root element <%s>)" % (path, root.tag))
    directory = os.path.dirname(os.path.abspath(path))
    _expand_includes(root, directory, path, [os.path.abspath(path)])
    _unique_joint_names(root, path)
    compiler = root.find("compiler")
    if compiler is None:
        compiler = ElementTree.SubElement(root, "compiler")
    folders = {}
    for attribute in ("meshdir", "texturedir"):
        base = compiler.get(attribute) or compiler.get("assetdir") or ""
        folders[attribute] = os.path.join(directory, base)
        compiler.attrib.pop(attribute, None)
    compiler.attrib.pop("assetdir", None)
    # file paths made absolute, so that an env's actors need no common meshdir (ShadowHand's
    # MJCF hand and URDF cube share one MuJoCo model, ``_env``)
    for asset in root.iter("asset"):
        for element in asset:
            folder = folders["texturedir" if element.tag == "texture" else "meshdir"]
            if element.get("file"):
                element.set("file", os.path.join(folder, element.get("file")))
    worldbody = root.find("worldbody")
    for child in [] if worldbody is None else list(worldbody):
        if child.tag not in ("body", "light"):
            worldbody.remove(child)  # the static world: the importer keeps the robot only
    _drop(root, ("sensor", "keyframe", "equality"))  # they may name the static world
    for element in root.findall("contact"):
        for pair in element.findall("pair"):
            element.remove(pair)
    _drop_unknown_materials(root)
    _drop_unloadable_meshes(root, path)
    _unlock_equal_ranges(root, path)
    for joint in root.iter("joint"):  # <default> classes too
        # the SDK's MJCF importer leaves a DOF's friction 0 whatever the frictionloss
        # (xbpeng/MimicKit#25); URDF <dynamics friction> does reach it
        joint.attrib.pop("frictionloss", None)
    actuators = _actuators(root, path)  # before their section goes, with tendons they use
    _drop(root, ("actuator",))
    for section in root.findall("tendon"):  # fixed tendons stay (``_tendons``)
        for spatial in section.findall("spatial"):
            section.remove(spatial)
    return tree, actuators


def _unique_joint_names(root, path):
    """A joint name the file repeats gets a suffix on its later joints, with a warning:
    the SDK loads such files with every joint a DOF (IsaacGymEnvs' Ingenuity writes
    ``rotor_roll0`` twice and counts 4 DOFs per env), MuJoCo refuses them."""
    seen = set()
    for joint in [] if root.find("worldbody") is None else root.find("worldbody").iter("joint"):
        name = joint.get("name")
        if name is None:
            continue
        unique, k = name, 1
        while unique in seen:
            unique, k = "%s_%d" % (name, k), k + 1
        if unique != name:
            log_warning("%s: joint name %r repeated; this joint is named %r" % (path, name, unique))
            joint.set("name", unique)
        seen.add(unique)


def _expand_includes(element, directory, path, chain):
    """Each ``<include file=...>`` replaced by the children of that file's ``<mujoco>``, the
    file relative to the model's folder (MuJoCo's rule); IsaacGymEnvs' shadow_hand.xml is
    built so and loads on the SDK."""
    index = 0
    while index < len(element):
        child = element[index]
        if child.tag != "include":
            _expand_includes(child, directory, path, chain)
            index += 1
            continue
        name = os.path.join(directory, child.get("file", ""))
        if os.path.abspath(name) in chain or not os.path.isfile(name):
            raise ImportFailure("%s: <include file=%r> %s" % (path, child.get("file"), "includes "
                                "itself" if os.path.abspath(name) in chain else "not found"))
        try:
            included = ElementTree.parse(name).getroot()
        except ElementTree.ParseError as exc:
            raise ImportFailure("%s is not valid XML: %s" % (name, exc)) from exc
        _expand_includes(included, directory, path, [*chain, os.path.abspath(name)])
        element.remove(child)
        for offset, part in enumerate(list(included)):
            element.insert(index + offset, part)
        index += len(included)


def _drop(root, sections):
    for section in sections:
        for element in root.findall(section):
            root.remove(element)


def _drop_unknown_materials(root):
    """References to materials the file does not define are dropped: MuJoCo refuses them,
    the SDK loads such files (IsaacGymEnvs' nv_humanoid.xml names an undefined "grid")."""
    defined = {material.get("name") for material in root.iter("material")}
    for element in root.iter():
        if element.tag != "material" and element.get("material") not in (None, *defined):
            del element.attrib["material"]


def _drop_unloadable_meshes(root, path):
    """Visual-only geoms (``contype`` and ``conaffinity`` 0) of meshes MuJoCo cannot load
    (IsaacGymEnvs' Ingenuity draws .glb meshes; the SDK loads them) are dropped with a
    warning, and with them their mass; a colliding one is refused (the fake's limit)."""
    unloadable = {mesh.get("name") or os.path.splitext(os.path.basename(mesh.get("file")))[0]
                  for mesh in root.iter("mesh") if mesh.get("file")
                  and not mesh.get("file").lower().endswith(MESH_FORMATS)}
    if not unloadable:
        return
    for body in root.iter("body"):
        for geom in body.findall("geom"):
            if geom.get("mesh") not in unloadable:
                continue
            if geom.get("contype") != "0" or geom.get("conaffinity") != "0":
                raise ImportFailure("%s: the colliding geom of mesh %r is in a format MuJoCo "
                                    "cannot load (it loads %s): convert it; this is a limit "
                                    "of the SDK fake, not of the SDK"
                                    % (path, geom.get("mesh"), ", ".join(MESH_FORMATS)))
            body.remove(geom)
            log_warning("%s: dropped the visual geom of mesh %r (a format MuJoCo cannot "
                        "load), and its mass" % (path, geom.get("mesh")))
            if body.find("geom") is None and body.find("inertial") is None:
                body.insert(0, ElementTree.Element("inertial", {  # MuJoCo's floor: movable
                    "pos": "0 0 0", "mass": "1e-6", "diaginertia": "1e-9 1e-9 1e-9"}))
    for assets in root.findall("asset"):
        for mesh in assets.findall("mesh"):
            if mesh.get("file") and not mesh.get("file").lower().endswith(MESH_FORMATS):
                assets.remove(mesh)


def _unlock_equal_ranges(root, path):
    """A limited joint with ``range="a a"`` (a joint the SDK loads locked: IsaacGymEnvs'
    Ingenuity's rotors) gets a range 1e-6 wide: MuJoCo refuses an empty one."""
    for joint in root.iter("joint"):
        bounds = (joint.get("range") or "").split()
        if len(bounds) == 2 and float(bounds[0]) == float(bounds[1]):
            joint.set("range", "%r %r" % (float(bounds[0]), float(bounds[0]) + 1e-6))


def _actuators(root, path):
    """The file's actuators as MuJoCo compiles them (defaults applied), in file order: what
    ``get_asset_actuator_properties`` reports (IsaacGymEnvs reads ``motor_effort``, the gear)."""
    if root.find("actuator") is None:
        return []
    model = compile_mjcf(root, path)
    joint = int(mujoco.mjtTrn.mjTRN_JOINT)
    return [{"name": model.actuator(a).name,
             "joint": model.joint(model.actuator_trnid[a, 0]).name
             if int(model.actuator_trntype[a]) == joint else "",
             "gear": float(model.actuator_gear[a, 0]),
             "ctrllimited": bool(model.actuator_ctrllimited[a]),
             "ctrlrange": tuple(float(v) for v in model.actuator_ctrlrange[a]),
             "forcelimited": bool(model.actuator_forcelimited[a]),
             "forcerange": tuple(float(v) for v in model.actuator_forcerange[a]),
             # an affine bias -kp * q - kv * qdot (position, velocity, general actuators)
             "kp": float(-model.actuator_biasprm[a, 1]), "kv": float(-model.actuator_biasprm[a, 2])}
            for a in range(model.nu)]


def compile_mjcf(root, path):
    """The MjModel of the MJCF element ``root`` (read from ``path``), or ImportFailure."""
    try:
        return mujoco.MjModel.from_xml_string(ElementTree.tostring(root, encoding="unicode"))
    except (ValueError, mujoco.FatalError) as exc:  # FatalError: a mju_error
        raise ImportFailure("MuJoCo could not compile %s: %s" % (path, exc)) from exc


def spec_from_string(text):
    """``MjSpec.from_string``: a static constructor from MuJoCo 3.3 on (the GPU machine's
    3.3.7 and 4.x), an instance method that fills the spec on 3.2."""
    try:
        return mujoco.MjSpec.from_string(text)
    except TypeError:
        spec = mujoco.MjSpec()
        spec.from_string(text)
        return spec


def finish(tree, path, fix_base_link, disable_gravity):
    """Check the one root body; free it (or fix it); compensate gravity on every body if
    asked (in the tree: MuJoCo counts gravity-compensated bodies when it compiles); make
    drives implicit."""
    root = tree.getroot()
    worldbody = root.find("worldbody")
    bodies = [] if worldbody is None else worldbody.findall("body")
    if len(bodies) != 1:
        raise ImportFailure("%s has %d bodies in <worldbody>; the importer takes one root "
                            "body" % (path, len(bodies)))
    robot = bodies[0]
    free = [j for j in list(robot) if j.tag == "freejoint"
            or (j.tag == "joint" and j.get("type") == "free")]
    if fix_base_link:
        for joint in free:
            robot.remove(joint)
    elif not free:
        # the SDK's free base: the root body's own joints are no DOFs (IsaacGymEnvs'
        # Ingenuity puts a hinge there and counts only its rotors' 4 DOFs)
        for joint in robot.findall("joint"):
            robot.remove(joint)
            log_warning("%s: joint %r of the root body dropped: the base is free "
                        "(fix_base_link is off)" % (path, joint.get("name")))
        robot.insert(0, ElementTree.Element("freejoint", {"name": ROOT_JOINT}))
    if disable_gravity:
        for body in robot.iter("body"):
            body.set("gravcomp", "1")
    option = root.find("option")
    if option is None:
        option = ElementTree.SubElement(root, "option")
    option.set("integrator", "implicitfast")  # drives are implicit in PhysX: keep them stable
