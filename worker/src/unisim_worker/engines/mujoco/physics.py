"""Physics randomisation for the MuJoCo engine: which ``MjModel`` fields each quantity
writes, for ``mujoco.batch`` (per-simulation fields) and for one ``MjModel`` per env.

* friction: ``geom_friction[:, 0]`` (sliding; MuJoCo's contact takes the larger of the
  two geoms' frictions, so randomise the robot's geoms against a low-friction floor or
  the floor itself);
* mass: ``body_mass``, and ``body_inertia`` scaled by the same ratio (same shape and mass
  distribution, denser or lighter); then ``mj_setConst`` for the derived constants;
* damping, armature: ``dof_damping``, ``dof_armature`` of every DOF of the named joints;
  stiffness: ``jnt_stiffness``; armature also re-runs ``mj_setConst``;
* gain: ``actuator_gainprm[:, 0]``, and for a position servo (``biasprm[1] == -kp``) its
  ``biasprm[1]``, so that the servo stays a PD controller with the new kp;
* gravity: ``opt.gravity``;
* push: added to the velocity of the model's first free joint.
"""

import numpy as np

from .. import physics

QUANTITIES = ("friction", "mass", "damping", "stiffness", "armature", "gain", "gravity",
              "push")
_CONST = ("mass", "armature")  # quantities that mj_setConst's constants depend on


class Write:
    """``field[elements(, component)] = values`` for rows of envs."""

    def __init__(self, field, elements, component, values):
        self.field = field
        self.elements = elements
        self.component = component
        self.values = values  # (rows, len(elements)[, 3])


class MujocoPhysics:
    """The ``physics`` spec of an INIT, resolved against one ``MjModel``."""

    def __init__(self, mujoco, model, spec):
        obj = mujoco.mjtObj
        names = {target: [mujoco.mj_id2name(model, kind, i) or "" for i in range(count)]
                 for target, kind, count in (("geoms", obj.mjOBJ_GEOM, model.ngeom),
                                             ("bodies", obj.mjOBJ_BODY, model.nbody),
                                             ("joints", obj.mjOBJ_JOINT, model.njnt),
                                             ("actuators", obj.mjOBJ_ACTUATOR, model.nu))}
        self.model = model
        self.entries = physics.resolve(spec, names)
        self.elements = [self._elements(mujoco, model, entry) for entry in self.entries]
        for entry, elements in zip(self.entries, self.elements):
            default, minimum = self._default(entry, elements)
            if minimum is not None:
                entry.check_bounds(default, minimum, "a %s" % entry.quantity)
        self.needs_const = any(e.quantity in _CONST for e in self.entries)
        self.root = None
        if spec.get("push"):
            free = np.flatnonzero(model.jnt_type == mujoco.mjtJoint.mjJNT_FREE)
            if not len(free):
                raise ValueError("pushes need a free joint (a floating root body); the model "
                                 "has none")
            self.root = int(model.jnt_dofadr[free[0]])

    @staticmethod
    def _elements(mujoco, model, entry):
        """Model indices an entry writes: geoms, bodies, DOFs, joints or actuators."""
        if entry.quantity == "friction" and entry.target == "bodies":
            return np.flatnonzero(np.isin(model.geom_bodyid, entry.positions))
        if entry.quantity == "mass" and 0 in entry.positions:
            raise ValueError("%s: the world body has no mass to randomise" % entry.label)
        if entry.quantity in ("damping", "armature"):
            dofs = [np.flatnonzero(model.dof_jntid == j) for j in entry.positions]
            return np.concatenate(dofs)
        if entry.quantity == "gravity":
            return np.arange(3)
        return entry.positions

    def _default(self, entry, elements):
        """The model's values an entry starts from, and the least value allowed."""
        model = self.model
        quantity = entry.quantity
        if quantity == "friction":
            return model.geom_friction[elements, 0], 0.0
        if quantity == "mass":
            return model.body_mass[elements], 0.0
        if quantity == "damping":
            return model.dof_damping[elements], 0.0
        if quantity == "armature":
            return model.dof_armature[elements], 0.0
        if quantity == "stiffness":
            return model.jnt_stiffness[elements], 0.0
        if quantity == "gain":
            return model.actuator_gainprm[elements, 0], None
        return np.asarray(model.opt.gravity, dtype=np.float64), None

    def writes(self, draws):
        """The field writes for a block of draws ``(rows, columns)``, entry by entry."""
        model = self.model
        out = []
        for entry, elements in zip(self.entries, self.elements):
            default = np.asarray(self._default(entry, elements)[0], dtype=np.float64)
            values = entry.values(default, entry.draws(draws))
            quantity = entry.quantity
            if quantity == "friction":
                out.append(Write("geom_friction", elements, 0, values))
            elif quantity == "mass":
                out.append(Write("body_mass", elements, None, values))
                with np.errstate(divide="ignore", invalid="ignore"):  # massless bodies
                    ratio = np.where(default > 0, values / default[None, :], 1.0)
                inertia = model.body_inertia[elements][None, :, :] * ratio[:, :, None]
                out.append(Write("body_inertia", elements, None, inertia))
            elif quantity in ("damping", "armature"):
                out.append(Write("dof_" + quantity, elements, None, values))
            elif quantity == "stiffness":
                out.append(Write("jnt_stiffness", elements, None, values))
            elif quantity == "gain":
                out.append(Write("actuator_gainprm", elements, 0, values))
                servo = model.actuator_biasprm[elements, 1] == -default
                if servo.any():
                    out.append(Write("actuator_biasprm", elements[servo], 1, -values[:, servo]))
            else:
                out.append(Write("opt.gravity", elements, None, values))
        return out


class BatchPhysics:
    """Applies draws to ``mujoco.batch`` simulations through per-simulation fields."""

    def __init__(self, plan, batch, qvel):
        self.plan = plan
        self.batch = batch
        self.qvel = qvel

    def apply(self, ids, draws, keep_state=True):
        """Write the draws of ``ids``; ``set_const`` keeps every simulation's state."""
        rows = np.asarray(ids, dtype=np.int64)
        for write in self.plan.writes(draws[rows]):
            target = self.batch.expand(write.field)
            if write.component is None:
                target[rows[:, None], write.elements] = write.values
            else:
                target[rows[:, None], write.elements, write.component] = write.values
        if self.plan.needs_const:
            self.batch.set_const(rows)

    def push(self, ids, velocities):
        root = self.plan.root
        self.qvel[ids, root:root + physics.PUSH_WIDTH] += velocities[ids]


class LoopPhysics:
    """Applies draws to one ``MjModel`` copy per env, the ``models`` of the loop stepper
    (MuJoCo 3.x) or of the single one (one env, any MuJoCo). The stepper refreshes a
    model's constants (``set_const``): only it knows where the env's state lives while
    ``mj_setConst`` overwrites its data."""

    def __init__(self, plan, stepper):
        self.plan = plan
        self.stepper = stepper

    def apply(self, ids, draws, keep_state=True):
        """Write the draws of ``ids``; ``keep_state``: their state survives mj_setConst
        (not needed before a reset)."""
        rows = np.asarray(ids, dtype=np.int64)
        writes = self.plan.writes(draws[rows])
        stepper = self.stepper
        for j, i in enumerate(rows):
            model = stepper.models[i]
            for write in writes:
                target = _field(model, write.field)
                if write.component is None:
                    target[write.elements] = write.values[j]
                else:
                    target[write.elements, write.component] = write.values[j]
            if self.plan.needs_const:
                stepper.set_const(i, keep_state)

    def push(self, ids, velocities):
        root = self.plan.root
        for i in ids:
            self.stepper.qvel[i, root:root + physics.PUSH_WIDTH] += velocities[i]


def _field(model, name):
    if name.startswith("opt."):
        return getattr(model.opt, name[4:])
    return getattr(model, name)
