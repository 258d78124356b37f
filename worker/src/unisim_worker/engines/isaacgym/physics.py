"""Physics randomisation for the IsaacGym engine, through the SDK's per-actor setters.

* friction (by bodies): ``friction`` of each shape of the named bodies,
  ``set_actor_rigid_shape_properties``. PhysX averages the two shapes' frictions (MuJoCo
  takes the larger). The ground plane's friction is one sim parameter: ``world`` is refused;
  so are geoms, whose names IsaacGym's MJCF importer does not keep;
* mass: ``mass`` and ``inertia`` (scaled alike) of the named bodies,
  ``set_actor_rigid_body_properties``;
* damping, armature: the DOF's ``damping`` (a position drive keeps its kv on top) and
  ``armature``, ``set_actor_dof_properties``, read back as the engine does at creation;
* gain: a position actuator's drive ``stiffness`` (its kp);
* push: added to the root velocity through the state tensors, as a reset writes them.

Refused by name at INIT: gravity (one sim parameter, not per env) and joint stiffness (a
DOF's stiffness is its position drive's kp: randomise the actuator's gain instead).
Imported only from ``IsaacGymEngine.init``, after the SDK. Type-checked against
isaacgym-stubs and run end to end on the SDK fake (tests/test_physics_isaacgym.py).
"""

from typing import Any, Dict, List, Sequence, Tuple

# isort: off
from isaacgym import gymapi  # IsaacGym refuses to load after torch
import numpy as np
# isort: on

from .. import physics
from . import mapping

QUANTITIES = ("friction", "mass", "damping", "armature", "gain", "push")


class IsaacPhysics:
    """The ``physics`` spec of an INIT, resolved against an ``IsaacSim``."""

    def __init__(self, sim: Any, scenes: Sequence[Any], spec: Dict[str, Any]) -> None:
        self.sim = sim
        gym = sim.gym
        actuators = [a.name for a in scenes[0].actuators]
        for wire in spec["parameters"]:
            _refuse(wire)
        self.entries = physics.resolve(spec, {
            "geoms": [], "bodies": list(sim.body_names), "joints": list(sim.dof_names),
            "actuators": actuators})
        # The model's values, from the first env of each variant.
        first = {variant: sim.assignment.index(variant) for variant in set(sim.assignment)}
        self.shapes: Dict[int, List[Any]] = {}
        self.bodies: Dict[int, List[Any]] = {}
        self.ranges: Dict[int, List[Any]] = {}
        for variant, env in first.items():
            handles = sim.envs[env], sim.actors[env]
            self.shapes[variant] = gym.get_actor_rigid_shape_properties(*handles)
            self.bodies[variant] = gym.get_actor_rigid_body_properties(*handles)
            self.ranges[variant] = gym.get_actor_rigid_body_shape_indices(*handles)
        # Per variant and DOF: the joint's own damping, and a position drive's kv.
        self.passive: Dict[int, np.ndarray] = {}
        self.kv: Dict[int, np.ndarray] = {}
        for variant in first:
            joints = {joint.name: joint for joint in scenes[variant].dof_joints}
            self.passive[variant] = np.array([joints[n].damping for n in sim.dof_names])
            kv = np.zeros(len(sim.dof_names))
            for actuator in scenes[variant].actuators:
                if actuator.kind == "position":
                    kv[list(sim.dof_names).index(actuator.joint)] = actuator.kv
            self.kv[variant] = kv
        if spec.get("push") and not scenes[0].free_root:
            raise ValueError("pushes need a free joint (a floating root body); the model "
                             "has none")
        for entry in self.entries:
            self._check(entry, sim.drives)

    def _check(self, entry: Any, drives: Sequence[Any]) -> None:
        if entry.quantity == "gain":
            for name, position in zip(entry.names, entry.positions):
                if not drives[0].position[position]:
                    raise ValueError("%s: actuator %r is a motor; IsaacGym randomises the gain "
                                     "of position actuators only (their drive stiffness)"
                                     % (entry.label, name))
        for variant in self.bodies:
            default = self._defaults(entry, variant)
            if entry.quantity != "gain":
                entry.check_bounds(default, 0.0, "a %s" % entry.quantity)

    def _defaults(self, entry: Any, variant: int) -> np.ndarray:
        """The model's values an entry starts from, in the order it writes them."""
        q = entry.quantity
        if q == "friction":
            return np.array([self.shapes[variant][s].friction for s in self._shapes(entry,
                                                                                      variant)])
        if q == "mass":
            return np.array([self.bodies[variant][b].mass for b in entry.positions])
        drives = self.sim.drives[variant]
        if q == "gain":
            return drives.stiffness[drives.ctrl_dof[entry.positions]]
        if q == "armature":
            return drives.armature[entry.positions]
        return self.passive[variant][entry.positions]

    def _shapes(self, entry: Any, variant: int) -> List[int]:
        ranges = self.ranges[variant]
        return [s for b in entry.positions
                for s in range(ranges[b].start, ranges[b].start + ranges[b].count)]

    def apply(self, rows: np.ndarray, draws: np.ndarray) -> None:
        sim, gym = self.sim, self.sim.gym
        for i in rows:
            variant = sim.assignment[i]
            env, actor = sim.envs[i], sim.actors[i]
            row = draws[i:i + 1]
            shapes = bodies = dofs = None
            for entry in self.entries:
                values = entry.values(self._defaults(entry, variant), entry.draws(row))[0]
                if entry.quantity == "friction":
                    shapes = shapes or gym.get_actor_rigid_shape_properties(env, actor)
                    for shape, value in zip(self._shapes(entry, variant), values):
                        shapes[shape].friction = float(value)
                elif entry.quantity == "mass":
                    bodies = bodies or gym.get_actor_rigid_body_properties(env, actor)
                    for body, value in zip(entry.positions, values):
                        default = self.bodies[variant][body]
                        bodies[body].mass = float(value)
                        bodies[body].inertia = _scaled(default.inertia, value / default.mass)
                else:
                    dofs = self.sim.props[variant].copy() if dofs is None else dofs
                    self._write_dofs(dofs, entry, variant, values)
            if shapes is not None and not gym.set_actor_rigid_shape_properties(env, actor, shapes):
                raise RuntimeError("IsaacGym refused the shape properties of env %d" % i)
            if bodies is not None and not gym.set_actor_rigid_body_properties(env, actor, bodies,
                                                                              False):
                raise RuntimeError("IsaacGym refused the body properties of env %d" % i)
            if dofs is not None:
                if not gym.set_actor_dof_properties(env, actor, dofs):
                    raise RuntimeError("IsaacGym refused the DOF properties of env %d" % i)
                mapping.verify_readback(dofs, gym.get_actor_dof_properties(env, actor), int(i))

    def _write_dofs(self, dofs: Any, entry: Any, variant: int, values: np.ndarray) -> None:
        drives = self.sim.drives[variant]
        if entry.quantity == "gain":
            dofs["stiffness"][drives.ctrl_dof[entry.positions]] = values
        elif entry.quantity == "armature":
            dofs["armature"][entry.positions] = values
        else:  # damping: the passive part; a position drive keeps its kv
            dofs["damping"][entry.positions] = values + self.kv[variant][entry.positions]
            idle = dofs["driveMode"][entry.positions] == int(gymapi.DOF_MODE_NONE)
            dofs["driveMode"][entry.positions[idle & (values > 0)]] = int(gymapi.DOF_MODE_VEL)

    def pushed(self, rows: np.ndarray, velocities: np.ndarray) -> Tuple[Any, Any]:
        """``(qpos, qvel)`` of ``rows`` with ``velocities`` added to the free root's qvel,
        for the engine to stage as a reset does."""
        state = self.sim.state()
        qvel = state["qvel"][rows].clone()
        push = velocities[rows, :physics.PUSH_WIDTH]
        qvel[:, :physics.PUSH_WIDTH] += qvel.new_tensor(push)
        return state["qpos"][rows].clone(), qvel


def _refuse(wire: Dict[str, Any]) -> None:
    """What IsaacGym has no per-env handle for, refused before names are looked up."""
    if wire["target"] == "geoms":
        raise ValueError("%s: IsaacGym's MJCF importer keeps no geom names; name bodies "
                         "(friction(..., bodies=[...]))" % wire["label"])
    if wire["quantity"] == "friction" and "world" in wire["names"]:
        raise ValueError("%s: the ground plane's friction is one IsaacGym sim parameter, not "
                         "per env; leave 'world' out" % wire["label"])


def _scaled(inertia: Any, ratio: float) -> Any:
    out = gymapi.Mat33()
    out.x = gymapi.Vec3(inertia.x.x * ratio, inertia.x.y * ratio, inertia.x.z * ratio)
    out.y = gymapi.Vec3(inertia.y.x * ratio, inertia.y.y * ratio, inertia.y.z * ratio)
    out.z = gymapi.Vec3(inertia.z.x * ratio, inertia.z.y * ratio, inertia.z.z * ratio)
    return out
