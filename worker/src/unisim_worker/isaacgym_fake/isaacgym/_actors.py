"""One actor: its properties and controls, and its part of its env's MjModel and MjData.

An actor keeps what the user set on it (DOF, body and shape properties, colours, targets),
so that its env can rebuild its model when another actor joins and apply them again
(``_env``). Rows follow the SDK's tensor layouts (docstrings of ``acquire_*_tensor``):
root and body states are position (3), quaternion xyzw (4), linear velocity (3), angular
velocity (3), world axes; DOF states are (position, velocity).
"""

import copy

import mujoco
import numpy as np

from ._assets import DRIVE_PREFIX, F32_MAX
from ._contacts import mix
from ._enums import DofDriveMode

NONE, POS, VEL, EFFORT = (int(DofDriveMode.DOF_MODE_NONE), int(DofDriveMode.DOF_MODE_POS),
                          int(DofDriveMode.DOF_MODE_VEL), int(DofDriveMode.DOF_MODE_EFFORT))
# Actuation forces drive DOF_MODE_EFFORT DOFs (the docs) and DOF_MODE_NONE ones too:
# IsaacGymEnvs' Ant and Humanoid import with DOF_MODE_NONE, set only actuation forces,
# and train on the SDK.
FORCED = (NONE, EFFORT)
# An actor's targets, by DOF: views of the columns of the sim's array (``SimState.targets``)
# once its step has run, from which the step's kernel writes the actuators' inputs.
TARGETS = ("position_target", "velocity_target", "effort")


def wxyz_to_xyzw(quat):
    return quat[..., [1, 2, 3, 0]]


def xyzw_to_wxyz(quat):
    return quat[..., [3, 0, 1, 2]]


class ActorSim:
    """An actor of ``asset`` at ``pose`` (env frame), in collision ``group`` with ``filter``."""

    def __init__(self, asset, pose, group, filter_bits, sensors):
        self.asset = asset
        self.group, self.filter = int(group), int(filter_bits)
        self.position = np.array([pose.p.x, pose.p.y, pose.p.z], dtype=np.float64)
        self.quat = np.array([pose.r.w, pose.r.x, pose.r.y, pose.r.z], dtype=np.float64)
        self.free = asset.free
        self.ndof = len(asset.dof_names)
        self.nbody = len(asset.body_names)
        self.shape_friction = np.array(asset.shape_friction, dtype=np.float64)
        self.tendon_props = copy.deepcopy(asset.tendon_props)  # the asset's at creation
        # ([(mass, com, inertia)], the scale they were given at) once set or scaled
        self.body_props = None
        self.scale = 1.0  # set_actor_scale's, relative to the asset
        self.lengths = None  # [(model field, rows, the asset's values)] once scaled (``_resize``)
        self.colors = {}  # body index: rgb
        self.position_target = np.zeros(self.ndof)
        self.velocity_target = np.zeros(self.ndof)
        self.effort = np.zeros(self.ndof)
        self.sensors = list(sensors)  # (body index, position, quaternion wxyz, properties)
        self.dof_forces = False  # enable_actor_dof_force_sensors
        self.env = self.model = self.data = None
        self.set_props(asset.default_props)  # no model yet: the modes only

    # -- place in the env's model -------------------------------------------------------

    def bound(self):
        return self.model is not None

    def bind(self, env, prefix, first, end):
        """Take bodies [first, end) of ``env``'s new model; apply this actor's properties."""
        model = env.model
        self.env, self.model, self.data = env, model, env.data
        self.bodies = np.arange(first, end)
        self.geoms = np.flatnonzero((model.geom_bodyid >= first) & (model.geom_bodyid < end))
        if end - first != self.nbody or len(self.geoms) != self.asset.shape_count:
            raise RuntimeError("the SDK fake's env model gives %s %d bodies and %d shapes; its "
                               "asset has %d and %d: an internal error of the fake, not of the "
                               "SDK" % (self.asset.path, end - first, len(self.geoms),
                                        self.nbody, self.asset.shape_count))
        joints = [model.joint(prefix + name).id for name in self.asset.dof_names]
        self.qadr, self.vadr = model.jnt_qposadr[joints], model.jnt_dofadr[joints]
        self.dof_bodies = model.dof_bodyid[self.vadr]
        self.joints = np.array(joints, dtype=np.int64)
        self.actuators = np.array([model.actuator(prefix + DRIVE_PREFIX + name).id
                                   for name in self.asset.dof_names], dtype=np.int64)
        root = model.body_jntadr[first]  # -1: a fixed base (a model may have no joint)
        self.root_q, self.root_v = ((model.jnt_qposadr[root], model.jnt_dofadr[root])
                                    if root >= 0 else (-1, -1))
        self.lengths = None  # a new model: the asset's lengths
        self._apply()
        if self.free:
            self.data.qpos[self.root_q:self.root_q + 3] = self.position
            self.data.qpos[self.root_q + 3:self.root_q + 7] = self.quat

    def _apply(self):
        model, bodies = self.model, self.bodies
        model.geom_friction[self.geoms, 0] = self.shape_friction
        # PhysX damping is a drive gain (DOF properties) only
        model.dof_damping[np.isin(model.dof_bodyid, bodies)] = 0.0
        model.jnt_stiffness[np.isin(model.jnt_bodyid, bodies)] = 0.0
        if self.asset.disable_gravity:
            model.body_gravcomp[bodies] = 1.0
        if not self.free:
            model.body_pos[bodies[0]] = self.position
            model.body_quat[bodies[0]] = self.quat
        self.set_props(self.props)
        if self.scale != 1.0:
            self._resize()
        if self.body_props is not None:
            self._write_body_props()
        for body, rgb in self.colors.items():
            self.set_color(body, rgb)

    def save(self):
        data = self.data
        root = (data.qpos[self.root_q:self.root_q + 7].copy(),
                data.qvel[self.root_v:self.root_v + 6].copy()) if self.free else None
        return root, self.dof_states()

    def restore(self, state):
        root, dofs = state
        if root is not None:
            self.data.qpos[self.root_q:self.root_q + 7] = root[0]
            self.data.qvel[self.root_v:self.root_v + 6] = root[1]
        self.set_dof_states(dofs)

    # -- properties -------------------------------------------------------------------

    def set_props(self, props):
        """DOF properties into the model: drive gains, effort and joint limits, armature;
        velocity limits and friction act at each substep (``_env.EnvSim.speeds``,
        ``bound_friction``)."""
        self.props = props.copy()
        self.modes = self.props["driveMode"].astype(np.int64)
        self.forced = np.isin(self.modes, FORCED)
        self.max_velocity = self.props["velocity"].astype(np.float64)
        self.min_velocity = -self.max_velocity
        self.friction = self.props["friction"].astype(np.float64)
        self.has_friction = bool(np.any(self.friction > 0))
        # the target each DOF's actuator input comes from: a column of the sim's targets
        # (``TARGETS``), or none (3: zero)
        self.sources = np.select([self.modes == POS, self.modes == VEL, self.forced],
                                 [0, 1, 2], 3).astype(np.int64)
        if self.model is None:
            return
        self.env.sim.generation += 1  # the step's plan holds the speeds
        model = self.model
        for k in range(self.ndof):
            p, actuator, joint = props[k], self.actuators[k], self.joints[k]
            mode, kp, kd = int(p["driveMode"]), float(p["stiffness"]), float(p["damping"])
            gain, bias = {POS: (kp, (0.0, -kp, -kd)), VEL: (kd, (0.0, 0.0, -kd)),
                          }.get(mode, (1.0, (0.0, 0.0, 0.0)))
            model.actuator_gainprm[actuator, 0] = gain
            model.actuator_biasprm[actuator, 0:3] = bias
            effort = float(p["effort"])  # "Maximum effort (force or torque)" (the docs)
            model.actuator_forcelimited[actuator] = effort < F32_MAX
            model.actuator_forcerange[actuator] = (-effort, effort)
            model.jnt_limited[joint] = bool(p["hasLimits"])
            if p["hasLimits"]:
                model.jnt_range[joint] = (p["lower"], p["upper"])
            model.dof_armature[self.vadr[k]] = p["armature"]
            model.dof_frictionloss[self.vadr[k]] = 0.0  # bound_friction's, before a substep

    def body_properties(self):
        model = self.model
        return [(float(model.body_mass[b]), model.body_ipos[b].copy(),
                 model.body_inertia[b].copy()) for b in self.bodies]

    def set_body_properties(self, rows, recompute_inertia=False):
        """Each body's (mass, centre of mass, principal inertia), then the constants MuJoCo
        derives from masses (``mj_setConst``: the bodies' and DOFs' inverse weights that
        scale contact softness, subtree masses), as a model compiled with them would have.

        ``recompute_inertia`` (set_actor_rigid_body_properties' "flag for recomputing
        inertia tensor on a mass change"; the release notes: "recomputing the inertia
        tensors of rigid bodies when their mass is changed") scales a body's inertia by its
        new mass over its current one. PhysX recomputes the inertia from the body's shapes
        at the new mass (PxRigidBodyExt::setMassAndUpdateInertia: shapes of one density),
        which for shapes that do not change is the old inertia so scaled; IsaacLab's
        ``randomize_rigid_body_mass(recompute_inertia=True)`` scales it so too. A body whose
        file gives an inertia of its own keeps that distribution of mass."""
        props = [(float(m), np.array(c, float), np.array(i, float)) for m, c, i in rows]
        if recompute_inertia:
            current = self.model.body_mass[self.bodies]
            props = [(m, c, i * (m / old) if old > 0 else i)
                     for (m, c, i), old in zip(props, current)]
        self.body_props = (props, self.scale)
        self._write_body_props()

    def _write_body_props(self):
        """``body_props`` at the actor's scale: each body's mass times the cube of the scale
        change since they were given, its centre of mass times the change, its inertia times
        its fifth power (``set_scale``)."""
        props, given = self.body_props
        change = self.scale / given
        self.env.sim.generation += 1  # the step's plan holds the root bodies' centres of mass
        model = self.model
        for body, (mass, com, inertia) in zip(self.bodies, props):
            model.body_mass[body] = mass * change ** 3
            model.body_ipos[body] = com * change
            model.body_inertia[body] = inertia * change ** 5
        mujoco.mj_setConst(model, mujoco.MjData(model))  # scratch data: the env's state stays

    def set_scale(self, scale):
        """``set_actor_scale``, as PhysX's ``PxScaleRigidActor`` scales an actor with its mass
        properties (PxSimpleFactory.h: "The geometry and relative positions of the actor are
        multiplied by the given scale value"; "the center of mass is linearly scaled, the
        mass is multiplied by the cube of the scale, and the inertia tensor by the fifth
        power of the scale"), relative to the asset: its lengths (``_resize``) and its
        bodies' mass properties, those set with ``set_body_properties`` scaled from the scale
        they were given at. The root's pose stays."""
        if self.body_props is None:  # the asset's own: never scaled before
            self.body_props = (self.body_properties(), 1.0)
        self.scale = scale
        self._resize()
        self._write_body_props()
        self.env.reshaped()

    def _resize(self):
        """The actor's lengths at ``scale`` times the asset's: the lengths in its bodies'
        frames (the positions of its child bodies, joint anchors, shapes and sites; its
        shapes' sizes, bounding spheres and boxes, and the bounding volumes MuJoCo's
        collisions read in the body and mesh frames) and its meshes' vertices (which the
        convex hulls MuJoCo collides index). Each actor's meshes are its own in the env's
        model (attached under its prefix, ``_env``): no other actor changes. The asset's
        values are read from the model the first time after it was built."""
        model = self.model
        if self.lengths is None:
            self.lengths = [(field, rows, getattr(model, field)[rows].copy())
                            for field, rows in self._length_rows()]
        for field, rows, asset in self.lengths:
            getattr(model, field)[rows] = asset * self.scale

    def _length_rows(self):
        """(model field, the actor's rows of it) for each field of lengths ``_resize``
        scales."""
        model, bodies, geoms = self.model, self.bodies, self.geoms
        meshes = model.geom_dataid[geoms[model.geom_type[geoms] == mujoco.mjtGeom.mjGEOM_MESH]]
        meshes = np.unique(meshes)
        volumes = _spans(np.concatenate([model.body_bvhadr[bodies], model.mesh_bvhadr[meshes]]),
                         np.concatenate([model.body_bvhnum[bodies], model.mesh_bvhnum[meshes]]))
        return (("body_pos", bodies[1:]),  # the root's is the actor's pose
                ("jnt_pos", np.flatnonzero(np.isin(model.jnt_bodyid, bodies))),
                ("site_pos", np.flatnonzero(np.isin(model.site_bodyid, bodies))),
                ("geom_pos", geoms), ("geom_size", geoms), ("geom_rbound", geoms),
                ("geom_aabb", geoms), ("bvh_aabb", volumes),
                ("mesh_vert", _spans(model.mesh_vertadr[meshes], model.mesh_vertnum[meshes])))

    def set_shape_friction(self, friction):
        self.shape_friction = np.array(friction, dtype=np.float64)
        self.model.geom_friction[self.geoms, 0] = self.shape_friction
        mix(self.model)

    def set_color(self, body, rgb):
        self.colors[int(body)] = tuple(rgb)
        geoms = self.model.geom_bodyid == self.bodies[int(body)]
        self.model.geom_rgba[geoms, 0:3] = rgb
        self.model.geom_matid[geoms] = -1  # a material's colour would hide the geom's

    # -- controls ---------------------------------------------------------------------

    def bound_friction(self):
        """The DOF property ``friction`` is PhysX's articulation joint friction coefficient
        (the release notes: "Exposed joint armature and joint friction in PhysX"; "a
        generalized friction force is calculated as DOF force multiplied by friction",
        NVIDIA forum's table; PxArticulationJointReducedCoordinate::setFrictionCoefficient:
        ``|F_resist| <= coefficient * (|F_trans| + |T_trans|)`` per axis, for the spatial
        force the joint transmits from parent to child): a Coulomb friction bounded by the
        joint's load, not a constant. The fake sets MuJoCo's dry friction of each DOF to
        that bound, from the force its body got from its parent in the last solve
        (``cfrc_int``, about the tree's centre of mass: moved to the body's, where PhysX
        puts its link frames). Needs ``mj_rnePostConstraint`` first (``EnvSim``)."""
        model, data, bodies = self.model, self.data, self.dof_bodies
        wrench = data.cfrc_int[bodies]
        centre = data.subtree_com[model.body_rootid[bodies]]
        torque = wrench[:, 0:3] + np.cross(centre - data.xipos[bodies], wrench[:, 3:6])
        load = np.linalg.norm(wrench[:, 3:6], axis=1) + np.linalg.norm(torque, axis=1)
        model.dof_frictionloss[self.vadr] = self.friction * load

    def dof_force_row(self):
        """The DOF forces (drive and actuation), zero unless enabled: "the returned forces
        will always be zero if enable_actor_dof_force_sensors was not previously called"."""
        if not self.dof_forces:
            return np.zeros(self.ndof)
        return self.data.qfrc_actuator[self.vadr]

    # -- state rows -------------------------------------------------------------------

    def root_state(self):
        """From the joint state itself, so that a set root state reads back at once (the
        SDK's setters write the root buffer; IsaacLab #240)."""
        model, data, origin = self.model, self.data, self.env.origin
        if not self.free:
            row = np.zeros(13)
            row[0:3] = model.body_pos[self.bodies[0]] + origin
            row[3:7] = wxyz_to_xyzw(model.body_quat[self.bodies[0]])
            return row
        joints = np.concatenate([data.qpos[self.root_q:self.root_q + 7],
                                 data.qvel[self.root_v:self.root_v + 6]])
        return root_rows(joints[None], model.body_ipos[self.bodies[0]][None], origin[None])[0]

    def body_states(self):
        data, model, bodies = self.data, self.model, self.bodies
        rows = np.zeros((self.nbody, 13))
        rows[:, 0:3] = data.xpos[bodies] + self.env.origin
        rows[:, 3:7] = wxyz_to_xyzw(data.xquat[bodies])
        angular = data.cvel[bodies, 0:3]
        rows[:, 7:10] = data.cvel[bodies, 3:6] + np.cross(  # centre-of-mass velocity
            angular, data.xipos[bodies] - data.subtree_com[model.body_rootid[bodies]])
        rows[:, 10:13] = angular
        return rows

    def dof_states(self):
        rows = np.empty((self.ndof, 2))
        self.dof_states_into(rows)
        return rows

    def dof_states_into(self, rows):
        """(position, velocity) of each DOF into ``rows`` (ndof, 2)."""
        rows[:, 0] = self.data.qpos[self.qadr]
        rows[:, 1] = self.data.qvel[self.vadr]

    def set_root_state(self, row):
        """A root state row (world frame): applied to the physics now; body states follow
        at the next simulate (IsaacLab #240: PhysX has no separate forward kinematics)."""
        self.env.moved = True
        position = np.asarray(row[0:3], dtype=np.float64) - self.env.origin
        quat = xyzw_to_wxyz(np.asarray(row[3:7], dtype=np.float64))
        quat = quat / max(np.linalg.norm(quat), 1e-12)
        if not self.free:
            self.position, self.quat = position, quat
            self.model.body_pos[self.bodies[0]] = position
            self.model.body_quat[self.bodies[0]] = quat
            return
        data, q, v = self.data, self.root_q, self.root_v
        data.qpos[q:q + 3] = position
        data.qpos[q + 3:q + 7] = quat
        linear, angular = np.asarray(row[7:10], float), np.asarray(row[10:13], float)
        rotation = _matrix(quat)
        data.qvel[v:v + 3] = linear - _cross(angular, rotation @ self.model.body_ipos[
            self.bodies[0]])
        data.qvel[v + 3:v + 6] = rotation.T @ angular  # freejoint: body-frame angular velocity

    def set_dof_states(self, rows):
        self.env.moved = True
        self.data.qpos[self.qadr] = rows[:, 0]
        self.data.qvel[self.vadr] = rows[:, 1]


def root_rows(joints, ipos, origins):
    """Root state rows of free roots, from their joint states ``joints`` (n, 13: qpos 7,
    qvel 6), centres of mass in the body frame ``ipos`` (n, 3) and env origins (n, 3): the
    position and xyzw quaternion of the body frame, the centre of mass's linear velocity and
    the angular velocity, world frame (MuJoCo's free joint holds the body frame's linear
    velocity in world axes and the angular velocity in body axes)."""
    quat = joints[:, 3:7] / np.maximum(np.linalg.norm(joints[:, 3:7], axis=1), 1e-12)[:, None]
    rotation = quat_matrices(quat)
    angular = np.einsum("nij,nj->ni", rotation, joints[:, 10:13])
    arm = np.einsum("nij,nj->ni", rotation, ipos)
    rows = np.empty((len(joints), 13))
    rows[:, 0:3] = joints[:, 0:3] + origins
    rows[:, 3:7] = wxyz_to_xyzw(quat)
    rows[:, 7:10] = joints[:, 7:10] + np.cross(angular, arm)
    rows[:, 10:13] = angular
    return rows


def _spans(starts, counts):
    """The indices of the ranges [start, start + count), concatenated."""
    return np.concatenate([np.arange(start, start + count)
                           for start, count in zip(starts, counts)] + [np.zeros(0, np.int64)])


def quat_matrices(quat):
    """(n, 3, 3) rotation matrices of unit quaternions (n, 4) wxyz."""
    w, x, y, z = quat.T
    return np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                     2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                     2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
                    axis=1).reshape(-1, 3, 3)


def _cross(a, b):
    """The cross product of two 3-vectors (np.cross costs 30 us a call, per actor per step)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def _matrix(quat_wxyz):
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, np.asarray(quat_wxyz, dtype=np.float64))
    return rotation.reshape(3, 3)
