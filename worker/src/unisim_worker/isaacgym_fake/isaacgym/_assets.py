"""``load_asset``: an MJCF (``_mjcf``) or URDF (``_urdf``) file as the MJCF tree of one
actor, with what gymapi reports of it (bodies, DOFs and their properties, actuators).

Each DOF gets a MuJoCo actuator that the fake drives as the DOF's drive mode says
(``_actors``); each env's model takes the tree through ``xml()`` (``_env``).
"""

import os
import xml.etree.ElementTree as ElementTree

import mujoco
import numpy as np

from ._mjcf import ImportFailure, compile_mjcf, finish, read_mjcf
from ._tendons import imported as imported_tendons
from ._types import DOF_PROPERTIES
from ._urdf import import_urdf

__all__ = ["DRIVE_PREFIX", "F32_MAX", "AssetData", "ImportFailure"]

DRIVE_PREFIX = "__fake_drive_"
F32_MAX = float(np.finfo(np.float32).max)
DEFAULT_VELOCITY = 64.0  # a DOF's velocity limit when the file gives none (AssetOptions'
#                          max_angular_velocity default); docs/isaacgym.md


class AssetData:
    """An imported asset: its MJCF tree, and what gymapi reports of it."""

    def __init__(self, path, options, tree=None):
        """The asset in the file at ``path``, or the MJCF ``tree`` built for it
        (``_primitives``; ``path`` then only names it)."""
        self.path = path
        self.primitive = tree is not None  # no file, no compiler settings of its own
        self.fix_base_link = bool(options.fix_base_link)
        self.disable_gravity = bool(options.disable_gravity)
        self.default_drive_mode = int(options.default_dof_drive_mode)
        # each body's maximum linear and angular speed (``_env.EnvSim.body_speeds``)
        self.body_speed = (float(options.max_linear_velocity),
                           float(options.max_angular_velocity))
        if tree is not None:
            self.tree, limits, self.actuators, inbound = tree, {}, [], None
        elif os.path.splitext(path)[1].lower() == ".urdf":
            self.tree, limits, inbound = import_urdf(path, options)
            self.actuators = []
        else:
            self.tree, self.actuators = read_mjcf(path)
            limits, inbound = {}, None
        self.actuator_names = [actuator["name"] for actuator in self.actuators]
        finish(self.tree, path, self.fix_base_link, self.disable_gravity)
        model = self.compile()
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
        drives = ElementTree.SubElement(self.tree.getroot(), "actuator")
        for name in self.dof_names:
            ElementTree.SubElement(drives, "general", {
                "name": DRIVE_PREFIX + name, "joint": name, "gaintype": "fixed",
                "gainprm": "0", "biastype": "affine", "biasprm": "0 0 0",
                "ctrllimited": "false", "forcelimited": "false"})
        model = self.compile()
        self.tendon_names, self.tendon_props = imported_tendons(model, options)
        self.body_names = [model.body(b).name or "body%d" % b for b in range(1, model.nbody)]
        # the SDK's joints: one per body but the root, fixed ones included (FrankaCubeStack
        # indexes its Jacobian by the fixed panda_hand_joint's index); a URDF names them, an
        # MJCF's joints are its DOFs
        self.joint_names = list(self.dof_names) if inbound is None else [
            inbound.get(name, name) for name in self.body_names[1:]]
        shapes = model.geom_bodyid > 0
        self.shape_count = int(np.sum(shapes))
        # friction per shape, for actors created from now on (set_asset_rigid_shape_properties)
        self.shape_friction = model.geom_friction[shapes, 0].copy()
        self.default_props = self._default_props(model, limits)

    def _default_props(self, model, limits):
        """DOF properties as imported: limits, armature, friction, stiffness and damping from
        the file (a URDF's <limit> gives effort and velocity too), the asset options' drive
        mode. Stiffness and damping are drive gains: only DOF_MODE_POS and DOF_MODE_VEL use
        them (``_actors``)."""
        props = np.zeros(len(self.dof_joints), dtype=DOF_PROPERTIES)
        for k, joint in enumerate(self.dof_joints):
            dof = model.jnt_dofadr[joint]
            props[k]["hasLimits"] = bool(model.jnt_limited[joint])
            props[k]["lower"], props[k]["upper"] = model.jnt_range[joint] \
                if model.jnt_limited[joint] else (0.0, 0.0)
            props[k]["driveMode"] = self.default_drive_mode
            limit = limits.get(self.dof_names[k])
            velocity = None if limit is None else limit.velocity
            effort = None if limit is None else limit.effort
            props[k]["velocity"] = DEFAULT_VELOCITY if velocity is None else velocity
            props[k]["effort"] = F32_MAX if effort is None else effort
            props[k]["armature"] = model.dof_armature[dof]
            props[k]["friction"] = model.dof_frictionloss[dof]
            props[k]["stiffness"] = model.jnt_stiffness[joint]
            props[k]["damping"] = model.dof_damping[dof]
        return props

    def xml(self):
        """The actor's MJCF, self-contained (absolute file paths), without ground."""
        return ElementTree.tostring(self.tree.getroot(), encoding="unicode")

    def compile(self):
        """The MjModel of one actor of this asset alone (for what gymapi reports of it)."""
        return compile_mjcf(self.tree.getroot(), self.path)
