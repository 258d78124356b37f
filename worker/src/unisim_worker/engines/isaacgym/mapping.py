"""Pure logic between an MJCF scan and IsaacGym's tensors: names, units, frames, checks.

IsaacGym orders DOFs as its importer likes, stores quaternions as xyzw, keeps root
positions in the sim's global frame (env origin included), and reports the linear
velocity of the root's centre of mass with the angular velocity in world axes. MuJoCo's
qpos/qvel (what the host's slots hold) use document order, wxyz, env-local positions,
the body origin's velocity and body-frame angular velocity. Everything here is numpy
and stdlib (Python 3.8), so it is unit-tested without the SDK; the state and ctrl maps
run their math in torch on the sim's device when given ``TorchArrays`` (torch is passed
in, never imported here).
"""

from typing import Any, Dict

import numpy as np

F32_MAX = float(np.finfo(np.float32).max)
# gymapi.DofDriveMode values (DOF_MODE_NONE, POS, VEL, EFFORT), passed in by the engine.
DRIVE_FIELDS = ("driveMode", "stiffness", "damping", "effort", "armature", "friction",
                "hasLimits", "lower", "upper")
ROOT_WIDTH = 13  # pos(3) quat xyzw(4) linvel(3) angvel(3)


def wxyz_to_xyzw(quat):
    return quat[..., [1, 2, 3, 0]]


def xyzw_to_wxyz(quat):
    return quat[..., [3, 0, 1, 2]]


def rotation_matrices(quat_wxyz, xp=np):
    """``(n, 3, 3)`` rotation matrices of ``(n, 4)`` float64 quaternions (wxyz, normalised here)."""
    q = quat_wxyz / ((quat_wxyz * quat_wxyz).sum(-1)[..., None] ** 0.5)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return xp.stack([
        xp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        xp.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        xp.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def _apply(matrices, vectors):
    """``matrices[n] @ vectors[n]`` for every row n."""
    return (matrices @ vectors[..., None])[..., 0]


def _cross(xp, a, b):
    return xp.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], -1)


class NumpyArrays:
    """The array library of the conversions below: numpy (tests, and the default)."""

    xp = np

    def float64(self, value):
        return np.asarray(value, dtype=np.float64)

    def float32(self, value):
        return np.asarray(value, dtype=np.float32)

    def index(self, value):
        return np.asarray(value, dtype=np.int64)

    def zeros(self, shape):
        return np.zeros(shape)


class TorchArrays:
    """The same calls on torch tensors of ``device``: the math below runs where the sim's
    tensors are (a GPU on the GPU pipeline), written once for both libraries."""

    def __init__(self, torch, device):
        self.xp = torch
        self.device = device

    def float64(self, value):
        return self.xp.as_tensor(value, dtype=self.xp.float64, device=self.device)

    def float32(self, value):
        return self.xp.as_tensor(value, dtype=self.xp.float32, device=self.device)

    def index(self, value):
        return self.xp.as_tensor(value, dtype=self.xp.long, device=self.device)

    def zeros(self, shape):
        return self.xp.zeros(shape, dtype=self.xp.float64, device=self.device)


NUMPY = NumpyArrays()


def map_by_name(source_names, target_names, what):
    """Index array ``i`` with ``source_names[i[k]] == target_names[k]``; errors name the gap."""
    source = list(source_names)
    target = list(target_names)
    missing = [name for name in target if name not in source]
    extra = [name for name in source if name not in target]
    if missing or extra or len(set(source)) != len(source):
        raise ValueError(
            "%s do not match by name: the engine has %s but the MJCF lacks them, the MJCF has "
            "%s but the engine lacks them (the importer may have dropped, renamed or merged "
            "joints; every joint needs a unique name)" % (what, missing or "none", extra or "none"))
    return np.array([source.index(name) for name in target], dtype=np.int64)


def check_bounds(scene):
    """Refuse ranges that PhysX cannot hold: NaN, inverted, or beyond float32."""
    for joint in scene.dof_joints:
        for bound in (joint.lower, joint.upper):
            if np.isnan(bound) or (np.isfinite(bound) and abs(bound) > F32_MAX):
                raise ValueError("joint %r has a range [%r, %r] outside float32"
                                 % (joint.name, joint.lower, joint.upper))
        if joint.lower > joint.upper:
            raise ValueError("joint %r has an inverted range [%r, %r]"
                             % (joint.name, joint.lower, joint.upper))
        for field in ("damping", "armature", "frictionloss"):
            value = getattr(joint, field)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError("joint %r has %s %r; it must be finite and >= 0"
                                 % (joint.name, field, value))
    for actuator in scene.actuators:
        for value in (actuator.kp, actuator.kv):
            if not (np.isfinite(value) and value >= 0):
                raise ValueError("actuator %r has kp/kv %r; they must be finite and >= 0"
                                 % (actuator.name, value))


def layout_signature(scene, dof_names=(), body_names=()):
    """What must be identical across fixed variants for one slot layout to fit them all.

    Without the engine's DOF and body names (before the assets are loaded) it compares
    what the MJCF scans alone say, so a mismatch is refused before the SDK is touched.
    """
    return {
        "joints": [joint.name for joint in scene.joints],
        "free_root": scene.free_root,
        "actuators": [(a.name, a.kind, a.joint) for a in scene.actuators],
        "engine_dofs": list(dof_names),
        "engine_bodies": list(body_names),
    }


def check_variant_layouts(signatures, sources):
    """Raise unless every variant's layout signature equals the first one's."""
    for signature, source in zip(signatures[1:], sources[1:]):
        for key, value in signature.items():
            if value != signatures[0][key]:
                raise ValueError(
                    "fixed variant %s changes the layout (%s): %r, while %s has %r; all "
                    "variants must have the same joints, actuators, DOFs and bodies in the same "
                    "order" % (source, key, value, sources[0], signatures[0][key]))


def variant_assignment(value, num_envs, num_variants):
    """Per-env variant index: the given list, or round-robin when None."""
    if value is None:
        return [env % num_variants for env in range(num_envs)]
    assignment = [int(v) for v in value]
    if len(assignment) != num_envs:
        raise ValueError("variant assignment has %d entries for %d envs"
                         % (len(assignment), num_envs))
    bad = [v for v in assignment if not 0 <= v < num_variants]
    if bad:
        raise ValueError("variant assignment refers to variants %s; there are %d (0..%d)"
                         % (sorted(set(bad)), num_variants, num_variants - 1))
    return assignment


class Drives:
    """Per-DOF drive settings in the engine's DOF order, from the MJCF scan.

    ``position`` actuators become PD position drives (stiffness kp, damping kv + joint
    damping); ``motor`` actuators effort drives (the joint's passive damping is lost: PhysX
    applies no drive damping in effort mode, reported as a warning); unactuated joints with
    damping a velocity drive towards 0, which is exactly MuJoCo's passive damping.
    """

    def __init__(self, scene, dof_names, modes):
        none, pos, vel, effort = modes
        joints = {joint.name: joint for joint in scene.dof_joints}
        self.dof_names = list(dof_names)
        count = len(self.dof_names)
        self.warnings = []
        self.mode = np.full(count, none, dtype=np.int32)
        self.stiffness = np.zeros(count)
        self.damping = np.array([joints[name].damping for name in self.dof_names])
        self.effort = np.full(count, F32_MAX)
        self.armature = np.array([joints[name].armature for name in self.dof_names])
        self.friction = np.array([joints[name].frictionloss for name in self.dof_names])
        self.limited = np.array([joints[name].limited for name in self.dof_names])
        self.lower = np.array([joints[name].lower for name in self.dof_names])
        self.upper = np.array([joints[name].upper for name in self.dof_names])
        self.mode[self.damping > 0] = vel
        self.ctrl_dof = np.zeros(len(scene.actuators), dtype=np.int64)
        self.ctrl_lower = np.full(len(scene.actuators), -np.inf)
        self.ctrl_upper = np.full(len(scene.actuators), np.inf)
        self.gear = np.ones(len(scene.actuators))
        self.position = np.zeros(len(scene.actuators), dtype=bool)
        seen: Dict[int, str] = {}
        for index, actuator in enumerate(scene.actuators):
            dof = self.dof_names.index(actuator.joint)
            if dof in seen:
                raise ValueError("actuators %r and %r drive the same joint %r; IsaacGym has one "
                                 "drive per DOF" % (seen[dof], actuator.name, actuator.joint))
            seen[dof] = actuator.name
            self.ctrl_dof[index] = dof
            self.gear[index] = actuator.gear
            if actuator.ctrl_range is not None:
                self.ctrl_lower[index], self.ctrl_upper[index] = actuator.ctrl_range
            if actuator.force_range is not None:
                self.effort[dof] = max(abs(actuator.force_range[0]), abs(actuator.force_range[1]))
            if actuator.kind == "position":
                self.position[index] = True
                self.mode[dof] = pos
                self.stiffness[dof] = actuator.kp
                self.damping[dof] += actuator.kv
            else:
                self.mode[dof] = effort
                if self.damping[dof] > 0:
                    self.warnings.append("joint %r: passive damping %g is not applied under a "
                                         "motor actuator (IsaacGym effort drive)"
                                         % (actuator.joint, self.damping[dof]))
                self.damping[dof] = 0.0

    def fill(self, props):
        """Write these drives into an IsaacGym DOF-properties structured array (in place)."""
        props["driveMode"][:] = self.mode
        props["stiffness"][:] = self.stiffness
        props["damping"][:] = self.damping
        props["effort"][:] = self.effort
        props["armature"][:] = self.armature
        props["friction"][:] = self.friction
        props["hasLimits"][:] = self.limited
        props["lower"][:] = np.where(self.limited, self.lower, 0.0)
        props["upper"][:] = np.where(self.limited, self.upper, 0.0)
        return props


class CtrlMap:
    """MuJoCo's ctrl clamping and gearing of every env's own variant, as per-env tables.

    ``targets`` maps a whole ``(num_envs, nu)`` ctrl batch with a few vectorised calls of
    ``arrays``' library, so on the GPU pipeline the controls never leave the device.
    ``position_dofs``/``effort_dofs`` are the engine DOFs the two column sets drive.
    """

    def __init__(self, drives, assignment, arrays=NUMPY):
        position = drives[0].position  # every variant drives the same DOFs (layout signature)
        self.arrays = arrays
        self.lower = arrays.float64(np.array([drives[v].ctrl_lower for v in assignment]))
        self.upper = arrays.float64(np.array([drives[v].ctrl_upper for v in assignment]))
        self.scale = arrays.float64(np.array([np.where(position, 1.0, drives[v].gear)
                                              for v in assignment]))
        self.position_columns = arrays.index(np.flatnonzero(position))
        self.effort_columns = arrays.index(np.flatnonzero(~position))
        self.position_dofs = arrays.index(drives[0].ctrl_dof[position])
        self.effort_dofs = arrays.index(drives[0].ctrl_dof[~position])

    def targets(self, ctrl):
        """``(position_targets, efforts)`` columns for a ctrl batch (float64)."""
        xp = self.arrays.xp
        ctrl = xp.minimum(xp.maximum(self.arrays.float64(ctrl), self.lower), self.upper)
        ctrl = ctrl * self.scale
        return ctrl[:, self.position_columns], ctrl[:, self.effort_columns]


def verify_readback(expected, actual, env, fields=DRIVE_FIELDS):
    """Raise naming each DOF property that PhysX did not keep as written."""
    problems = []
    for field in fields:
        want = np.asarray(expected[field], dtype=np.float64)
        got = np.asarray(actual[field], dtype=np.float64)
        if field in ("lower", "upper"):
            mask = np.asarray(expected["hasLimits"], dtype=bool)
            want, got = want[mask], got[mask]
        if want.shape != got.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-7):
            problems.append("%s: wrote %s, read back %s" % (field, want.tolist(), got.tolist()))
    if problems:
        raise RuntimeError("IsaacGym did not keep the DOF properties of env %d: %s"
                           % (env, "; ".join(problems)))


class StateMap:
    """Converts between MuJoCo-layout qpos/qvel rows and IsaacGym root/DOF state rows.

    The math runs in ``arrays``' library (numpy, or torch on the sim's device): ``on``
    gives the same map for another library.
    """

    def __init__(self, free_root, dof_source, origins, com, arrays=NUMPY):
        self._given = (free_root, dof_source, origins, com)
        self.arrays = arrays
        self.free_root = free_root
        # engine DOF k <- MJCF DOF column dof_source[k]
        self.dof_source = arrays.index(np.asarray(dof_source, dtype=np.int64))
        # MJCF column j <- engine DOF dof_target[j]
        self.dof_target = arrays.index(np.argsort(np.asarray(dof_source, dtype=np.int64)))
        self.origins = arrays.float64(origins)  # (num_envs, 3)
        self.com = arrays.float64(com)  # (num_envs, 3): root COM, body frame
        self.head_q = 7 if free_root else 0
        self.head_v = 6 if free_root else 0

    def on(self, arrays):
        return StateMap(*self._given, arrays=arrays)

    def to_engine(self, rows, qpos, qvel):
        """``(root (n, 13), dof (n, ndof, 2))`` float32 for env ``rows``."""
        arrays, xp = self.arrays, self.arrays.xp
        rows = arrays.index(rows)
        qpos = arrays.float64(qpos)
        qvel = arrays.float64(qvel)
        root = arrays.zeros((len(rows), ROOT_WIDTH))
        if self.free_root:
            quat = qpos[:, 3:7] / ((qpos[:, 3:7] * qpos[:, 3:7]).sum(-1)[:, None] ** 0.5)
            rot = rotation_matrices(quat, xp)
            omega = _apply(rot, qvel[:, 3:6])
            lever = _apply(rot, self.com[rows])
            root[:, 0:3] = qpos[:, 0:3] + self.origins[rows]
            root[:, 3:7] = wxyz_to_xyzw(quat)
            root[:, 7:10] = qvel[:, 0:3] + _cross(xp, omega, lever)
            root[:, 10:13] = omega
        dof = arrays.zeros((len(rows), len(self.dof_source), 2))
        dof[:, :, 0] = qpos[:, self.head_q:][:, self.dof_source]
        dof[:, :, 1] = qvel[:, self.head_v:][:, self.dof_source]
        return arrays.float32(root), arrays.float32(dof)

    def from_engine(self, rows, root, dof, qpos, qvel):
        """Write env ``rows`` of float64 ``qpos``/``qvel`` from root ``(n, 13)``, dof
        ``(n, ndof, 2)``."""
        arrays, xp = self.arrays, self.arrays.xp
        rows = arrays.index(rows)
        root = arrays.float64(root)
        dof = arrays.float64(dof)
        if self.free_root:
            quat = xyzw_to_wxyz(root[:, 3:7])
            rot = rotation_matrices(quat, xp)
            omega = root[:, 10:13]
            lever = _apply(rot, self.com[rows])
            qpos[rows, 0:3] = root[:, 0:3] - self.origins[rows]
            qpos[rows, 3:7] = quat
            qvel[rows, 0:3] = root[:, 7:10] - _cross(xp, omega, lever)
            qvel[rows, 3:6] = _apply(rot.swapaxes(-1, -2), omega)
        qpos[rows, self.head_q:] = dof[:, self.dof_target, 0]
        qvel[rows, self.head_v:] = dof[:, self.dof_target, 1]


def configuration_report(sim, pipeline, variants, self_collision, excludes, warnings):
    """The INIT reply's ``report``: what the engine actually runs, read back from it.

    ``sim`` holds the sim parameters read back; each of ``variants`` holds ``source``,
    ``envs`` (count), ``dof_names``, ``dof`` (read-back properties by field), ``bodies``
    (names, masses, inertia matrices, centres of mass) and ``actuators``.
    """
    collision: Dict[str, Any] = {}
    collision["self_collision"] = bool(self_collision)
    collision["actor_filter"] = 0 if self_collision else 1
    collision["collision_group"] = "one per env: envs never collide with each other"
    if excludes:
        collision["mjcf_excludes"] = [list(pair) for pair in excludes]
        collision["mjcf_excludes_note"] = (
            "contained in self_collision=False" if not self_collision else
            "NOT reproduced: gymapi has no per-pair filter; these bodies may collide")
    return {
        "schema": 1,
        "sim": sim,
        "pipeline": pipeline,
        "collision": collision,
        "variants": variants,
        "warnings": list(warnings),
        "read_back": ["sim", "variants.dof", "variants.bodies"],
    }
