"""MJCF as IsaacGym's importer keeps it, and the edits every imported tree gets.

One root body in <worldbody> (the adapter's own limits, in docs/isaacgym.md, are
stricter: no <include>, primitive geoms); <include> is followed as MuJoCo follows it.
What the importer drops (the static geoms of <worldbody>, actuators, sensors, keyframes,
tendons) is dropped here too.
"""

import os
import xml.etree.ElementTree as ElementTree

import mujoco

ROOT_JOINT = "__fake_root"


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
    compiler = root.find("compiler")
    if compiler is None:
        compiler = ElementTree.SubElement(root, "compiler")
    for attribute in ("meshdir", "texturedir"):
        base = compiler.get(attribute) or compiler.get("assetdir") or ""
        compiler.set(attribute, os.path.join(directory, base))
    compiler.attrib.pop("assetdir", None)
    worldbody = root.find("worldbody")
    for child in [] if worldbody is None else list(worldbody):
        if child.tag not in ("body", "light"):
            worldbody.remove(child)  # the static world: the importer keeps the robot only
    _drop(root, ("sensor", "keyframe", "equality"))  # they may name the static world
    for element in root.findall("contact"):
        for pair in element.findall("pair"):
            element.remove(pair)
    _drop_unknown_materials(root)
    for joint in root.iter("joint"):  # <default> classes too
        # the SDK's MJCF importer leaves a DOF's friction 0 whatever the frictionloss
        # (xbpeng/MimicKit#25); URDF <dynamics friction> does reach it
        joint.attrib.pop("frictionloss", None)
    actuators = _actuators(root, path)  # before their section goes, with tendons they use
    _drop(root, ("actuator", "tendon"))
    return tree, actuators


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
        robot.insert(0, ElementTree.Element("freejoint", {"name": ROOT_JOINT}))
    if disable_gravity:
        for body in robot.iter("body"):
            body.set("gravcomp", "1")
    option = root.find("option")
    if option is None:
        option = ElementTree.SubElement(root, "option")
    option.set("integrator", "implicitfast")  # drives are implicit in PhysX: keep them stable
