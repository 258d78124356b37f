"""One actor's physics: its own MjModel copy and MjData, in its env's frame.

The sim's tensors are assembled from these (``_sim``). Rows follow the SDK's tensor
layouts (docstrings of ``acquire_*_tensor``): root and body states are position (3),
quaternion xyzw (4), linear velocity (3), angular velocity (3), world axes; DOF states
are (position, velocity); net contact forces are world-frame forces (3) per body.
"""

import copy

import mujoco
import numpy as np

from ._assets import F32_MAX
from ._enums import DofDriveMode

NONE, POS, VEL, EFFORT = (int(DofDriveMode.DOF_MODE_NONE), int(DofDriveMode.DOF_MODE_POS),
                          int(DofDriveMode.DOF_MODE_VEL), int(DofDriveMode.DOF_MODE_EFFORT))


def wxyz_to_xyzw(quat):
    return quat[..., [1, 2, 3, 0]]


def xyzw_to_wxyz(quat):
    return quat[..., [3, 0, 1, 2]]


class ActorSim:
    """An actor of ``asset`` at ``pose`` (env frame) in an env at ``origin`` (world)."""

    def __init__(self, asset, pose, origin, filter_bits, ground):
        self.asset = asset
        self.origin = np.asarray(origin, dtype=np.float64)
        self.model = _copy(asset.compile(ground))
        self.data = mujoco.MjData(self.model)
        model = self.model
        self.free = asset.free
        self.ndof = len(asset.dof_joints)
        self.nbody = model.nbody - 1
        self.qadr = model.jnt_qposadr[asset.dof_joints]
        self.vadr = model.jnt_dofadr[asset.dof_joints]
        self.position_target = np.zeros(self.ndof)
        self.velocity_target = np.zeros(self.ndof)
        self.effort = np.zeros(self.ndof)
        self.props = asset.default_props.copy()
        robot = model.geom_bodyid > 0
        model.geom_friction[robot, 0] = asset.shape_friction
        collides = (model.geom_contype | model.geom_conaffinity) != 0
        if filter_bits:  # filter & filter != 0: the actor's shapes never touch each other
            model.geom_contype[robot & collides] = 0
            model.geom_conaffinity[robot & collides] = 1
        model.dof_damping[:] = 0.0  # PhysX damping is a drive gain (DOF properties) only
        model.jnt_stiffness[:] = 0.0
        if asset.disable_gravity:
            model.body_gravcomp[1:] = 1.0
        position = [pose.p.x, pose.p.y, pose.p.z]
        quat = [pose.r.w, pose.r.x, pose.r.y, pose.r.z]
        if self.free:
            self.data.qpos[0:3] = position
            self.data.qpos[3:7] = quat
        else:
            model.body_pos[1] = position
            model.body_quat[1] = quat
        self.set_props(self.props)
        mujoco.mj_forward(model, self.data)
        self.graphics_qpos = self.data.qpos.copy()
        self.fetched_qpos = self.data.qpos.copy()

    # -- properties -------------------------------------------------------------------

    def set_props(self, props):
        """DOF properties into the model: drive gains, limits, armature, friction."""
        model = self.model
        self.props = props.copy()
        for k in range(self.ndof):
            p = props[k]
            mode, kp, kd = int(p["driveMode"]), float(p["stiffness"]), float(p["damping"])
            gain, bias = {POS: (kp, (0.0, -kp, -kd)), VEL: (kd, (0.0, 0.0, -kd)),
                          EFFORT: (1.0, (0.0, 0.0, 0.0))}.get(mode, (0.0, (0.0, 0.0, 0.0)))
            model.actuator_gainprm[k, 0] = gain
            model.actuator_biasprm[k, 0:3] = bias
            effort = float(p["effort"])
            model.actuator_forcelimited[k] = effort < F32_MAX
            model.actuator_forcerange[k] = (-effort, effort)
            joint = self.asset.dof_joints[k]
            model.jnt_limited[joint] = bool(p["hasLimits"])
            if p["hasLimits"]:
                model.jnt_range[joint] = (p["lower"], p["upper"])
            model.dof_armature[self.vadr[k]] = p["armature"]
            model.dof_frictionloss[self.vadr[k]] = p["friction"]

    def body_properties(self):
        model = self.model
        return [(float(model.body_mass[b]), model.body_ipos[b].copy(),
                 model.body_inertia[b].copy()) for b in range(1, model.nbody)]

    # -- stepping ---------------------------------------------------------------------

    def simulate(self, dt, substeps, gravity):
        model, data = self.model, self.data
        model.opt.timestep = dt / substeps
        model.opt.gravity[:] = gravity
        modes = self.props["driveMode"]
        data.ctrl[:] = np.where(modes == POS, self.position_target,
                                np.where(modes == VEL, self.velocity_target,
                                         np.where(modes == EFFORT, self.effort, 0.0)))
        for _ in range(substeps):
            mujoco.mj_step(model, data)
        mujoco.mj_forward(model, data)  # bodies, velocities and contacts of the new state

    # -- state rows -------------------------------------------------------------------

    def root_state(self):
        """From the joint state itself, so that a set root state reads back at once (the
        SDK's setters write the root buffer; IsaacLab #240)."""
        model, data = self.model, self.data
        row = np.zeros(13)
        if not self.free:
            row[0:3] = model.body_pos[1] + self.origin
            row[3:7] = wxyz_to_xyzw(model.body_quat[1])
            return row
        quat = data.qpos[3:7] / np.linalg.norm(data.qpos[3:7])
        rotation = _matrix(quat)
        angular = rotation @ data.qvel[3:6]
        row[0:3] = data.qpos[0:3] + self.origin
        row[3:7] = wxyz_to_xyzw(quat)
        row[7:10] = data.qvel[0:3] + np.cross(angular, rotation @ model.body_ipos[1])
        row[10:13] = angular
        return row

    def _velocities(self):
        """(nbody, 6) linear velocity of each body's centre of mass, angular velocity."""
        data, model = self.data, self.model
        bodies = np.arange(1, model.nbody)
        angular = data.cvel[bodies, 0:3]
        linear = data.cvel[bodies, 3:6] + np.cross(
            angular, data.xipos[bodies] - data.subtree_com[model.body_rootid[bodies]])
        return np.concatenate([linear, angular], axis=1)

    def body_states(self):
        data = self.data
        rows = np.zeros((self.nbody, 13))
        rows[:, 0:3] = data.xpos[1:] + self.origin
        rows[:, 3:7] = wxyz_to_xyzw(data.xquat[1:])
        rows[:, 7:13] = self._velocities()
        return rows

    def dof_states(self):
        return np.stack([self.data.qpos[self.qadr], self.data.qvel[self.vadr]], axis=1)

    def contact_forces(self):
        """Net contact force on each body, world frame (the force on geom2 is +f, on
        geom1 -f: MuJoCo's contact normal points from geom1 to geom2)."""
        model, data = self.model, self.data
        forces = np.zeros((model.nbody, 3))
        wrench = np.zeros(6)
        for i in range(data.ncon):
            contact = data.contact[i]
            if contact.efc_address < 0:
                continue
            mujoco.mj_contactForce(model, data, i, wrench)
            world = contact.frame.reshape(3, 3).T @ wrench[0:3]
            forces[model.geom_bodyid[contact.geom2]] += world
            forces[model.geom_bodyid[contact.geom1]] -= world
        return forces[1:]

    def set_root_state(self, row):
        """A root state row (world frame): applied to the physics now; body states follow
        at the next simulate (IsaacLab #240: PhysX has no separate forward kinematics)."""
        position = np.asarray(row[0:3], dtype=np.float64) - self.origin
        quat = xyzw_to_wxyz(np.asarray(row[3:7], dtype=np.float64))
        quat = quat / max(np.linalg.norm(quat), 1e-12)
        if not self.free:
            self.model.body_pos[1] = position
            self.model.body_quat[1] = quat
            return
        data = self.data
        data.qpos[0:3] = position
        data.qpos[3:7] = quat
        linear, angular = np.asarray(row[7:10], float), np.asarray(row[10:13], float)
        rotation = _matrix(quat)
        data.qvel[0:3] = linear - np.cross(angular, rotation @ self.model.body_ipos[1])
        data.qvel[3:6] = rotation.T @ angular  # freejoint: body-frame angular velocity

    def set_dof_states(self, rows):
        self.data.qpos[self.qadr] = rows[:, 0]
        self.data.qvel[self.vadr] = rows[:, 1]

    def fetch(self):
        self.fetched_qpos = self.data.qpos.copy()

    def step_graphics(self):
        self.graphics_qpos = self.fetched_qpos.copy()


def _matrix(quat_wxyz):
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, np.asarray(quat_wxyz, dtype=np.float64))
    return rotation.reshape(3, 3)


def _copy(model):
    """A model of its own per actor: DOF properties differ between actors."""
    return copy.deepcopy(model)
