"""One env's physics: one MjModel and MjData holding all of the env's actors and the ground.

Collisions follow the SDK's ``create_actor`` docstring and the IsaacGym docs
(programming/simsetup.html, "Environments and Actors"): two bodies collide only if their
actors are in the same collision group (group -1 collides with every group) and their
collision filters share no bit; the filter applies within an actor too (its
self-collisions). Envs never touch: each is a model of its own. The ground (plane, height
fields, triangle meshes) is in every env's model and collides with everything.

The model is built when first needed after an actor was added (MjSpec: each actor's asset
attached under the prefix ``a<k>/``, an exclude for every body pair that must not
collide, the ground's contacts as pairs, ``_contacts``); envs with the same actors share
one compilation and get copies of it.
"""

import copy
import xml.etree.ElementTree as ElementTree

import mujoco
import numpy as np

from . import _attractors, _native, _sensors, _tendons
from ._contacts import add_ground_pairs, mix, pair_timeconst_weights
from ._errors import fake_limit, log_error
from ._mjcf import spec_from_string
from ._window import Window, grown

# The compiler settings an attached asset carries into the env's model. MjSpec applies
# the parent spec's (the env's) settings to attached bodies, so the env takes the
# actors' settings, which must agree.
COMPILER = ("degree", "eulerseq", "autolimits", "inertiafromgeom", "inertiagrouprange",
            "boundmass", "boundinertia", "balanceinertia", "fusestatic", "discardvisual",
            "convexhull", "exactmeshinertia", "alignfree", "settotalmass", "meshdir",
            "texturedir")


def prefix(k):
    return "a%d/" % k


class EnvSim:
    def __init__(self, sim, index, origin):
        self.sim = sim
        self.index = index
        self.origin = np.asarray(origin, dtype=np.float64)
        self.actors = []  # ActorSim, in creation order
        self.model = None
        self.data = None
        self.window = None  # _window.Window: the ground's height fields around the actors
        self.extent = sim.ground.extent  # the windows' width, m
        self.aggregate = None  # the open aggregate: [max_bodies, max_shapes, self_collision, first]
        self.aggregates = []  # closed ones: (first actor, end actor, self_collision)
        self.cameras = []  # _render.Camera, by handle (None once destroyed)
        self.names = []  # actor names, by handle
        self.fetched_qpos = self.graphics_qpos = None  # fetch_results' copy, step_graphics'
        self.solved = False  # whether a simulate ran since the model was built
        self.moved = True  # whether a setter moved an actor since the last simulate
        self.sensor_rows = None  # force sensor readings of the last simulate, if any sensor

    def add(self, actor):
        if self.aggregate is not None:
            max_bodies, max_shapes, _, first = self.aggregate
            bodies = sum(a.nbody for a in self.actors[first:]) + actor.nbody
            shapes = sum(a.asset.shape_count for a in self.actors[first:]) \
                + actor.asset.shape_count
            if bodies > max_bodies or shapes > max_shapes:  # PhysX logs it and goes on
                log_error("create_actor: the open aggregate of env %d was begun for at most "
                          "%d bodies and %d shapes, and would hold %d and %d: pass the sums of "
                          "get_asset_rigid_body_count and get_asset_rigid_shape_count to "
                          "begin_aggregate" % (self.index, max_bodies, max_shapes, bodies,
                                               shapes))
        self.actors.append(actor)
        self.model = None

    def physics(self):
        """The env's (model, data), built with every actor added so far."""
        if self.model is None:
            self._build()
        return self.model, self.data

    # -- building ---------------------------------------------------------------------

    def _key(self):
        """What the compiled model depends on; groups by their pattern within the env (most
        tasks give each env a group of its own, and those envs share one model)."""
        groups = {-1: -1}
        actors = tuple((a.asset, groups.setdefault(a.group, len(groups) - 1), a.filter)
                       for a in self.actors)
        return (actors, tuple(self.aggregates), self.sim.ground.key(), self.extent,
                _attractors.key(self))

    def _build(self, building=True):
        self.sim.generation += 1  # the step's plan points at the model and data replaced here
        self.moved = True
        saved = [(actor, actor.save()) for actor in self.actors if actor.bound()]
        compiled = self.sim.compiled(self._key(), self._compile)
        self.model = copy.deepcopy(compiled)  # DOF and body properties differ per env
        self.data = _native.new_data(self.model)
        model = self.model
        roots = [b for b in range(1, model.nbody) if model.body_parentid[b] == 0]
        for k, actor in enumerate(self.actors):
            end = roots[k + 1] if k + 1 < len(roots) else model.nbody
            actor.bind(self, prefix(k), roots[k], end)
        _tendons.bind(self)
        _attractors.bind(self)
        for actor, state in saved:
            actor.restore(state)
        mix(model)
        self.window = Window(self.sim.ground, model, self.origin)
        if self._follow(model, self.data, building):
            return
        # On height fields, bodies and velocities but no contacts until the first simulate:
        # legged_gym creates its robots inside the ground (z = 0, until their first reset),
        # where MuJoCo makes a contact per height-field prism a shape touches, whose solver
        # rows would hold 0.5 MB of each env's MjData arena resident for good (on a plane
        # they are few, and the first step keeps reading them as before)
        contacts = int(mujoco.mjtDisableBit.mjDSBL_CONTACT) if self.window.panes else 0
        model.opt.disableflags |= contacts
        mujoco.mj_forward(model, self.data)
        model.opt.disableflags &= ~contacts
        self.fetched_qpos = self.data.qpos.copy()
        self.graphics_qpos = self.data.qpos.copy()
        self.timeconst = model.geom_solref[:, 0].copy()  # the contacts' own, when shallow
        self.shallow = self.floor = float(self.timeconst.min()) if model.ngeom else 0.0
        self.pair_timeconsts = pair_timeconst_weights(model, self.timeconst)
        self.solved = False  # no simulate yet: nothing solved to report
        sensors = sum(len(actor.sensors) for actor in self.actors)
        self.sensor_rows = np.zeros((sensors, 6)) if sensors else None

    def _compile(self):
        spec = mujoco.MjSpec()
        children = [spec_from_string(_named_bodies(a.asset.xml())) for a in self.actors]
        # primitives (create_box, ...) take any settings: the first file's are the env's
        files = [k for k, actor in enumerate(self.actors) if not actor.asset.primitive]
        first = files[0] if files else 0
        _copy_settings(children[first], spec)
        settings = _settings(children[first])
        for k in files:
            if _settings(children[k]) != settings:
                raise fake_limit("env %d holds actors of assets with different compiler "
                                 "settings (%s vs %s); the fake builds one MuJoCo model per "
                                 "env and needs them equal" % (
                                     self.index, self.actors[k].asset.path,
                                     self.actors[first].asset.path))
        for k, child in enumerate(children):
            spec.worldbody.add_frame().attach_body(child.worldbody.first_body(), prefix(k), "")
        self.sim.ground.add_to(spec, self.extent)
        model = spec.compile()
        for one, other in self._filtered(model):
            exclude = spec.add_exclude()
            exclude.bodyname1, exclude.bodyname2 = one, other
        add_ground_pairs(spec, model)
        _attractors.add_to(spec, model, self)
        model = spec.compile()
        # PhysX drives are implicit: keep them stable
        model.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        return model

    def _follow(self, model, data, building):
        """Move the ground's windows to the actors; if they need wider ones, rebuild the model
        with them (state kept) and say so. While the sim is being built, the envs built next
        start with the wider windows (during a step, envs share nothing)."""
        needed = self.window.follow(model, data)
        if needed is None:
            return False
        self.extent = grown(self.extent, needed)
        if building:
            self.sim.ground.extent = max(self.sim.ground.extent, self.extent)
        self._build(building)
        return True

    def _filtered(self, model):
        """Body name pairs that must not collide (group, filter and aggregate rules)."""
        roots = [b for b in range(1, model.nbody) if model.body_parentid[b] == 0] + [model.nbody]
        bodies = [[model.body(b).name for b in range(roots[k], roots[k + 1])]
                  for k in range(len(self.actors))]
        pairs = []
        for i, first in enumerate(self.actors):
            for j in range(i, len(self.actors)):
                second = self.actors[j]
                if self._collide(i, j, first, second):
                    continue
                for m, one in enumerate(bodies[i]):
                    others = bodies[j][m + 1:] if i == j else bodies[j]
                    pairs += [(one, other) for other in others]
        return pairs

    def _collide(self, i, j, first, second):
        groups = first.group == second.group or -1 in (first.group, second.group)
        if not groups or first.filter & second.filter:
            return False
        return not any(start <= i < end and start <= j < end and not selfish and i != j
                       for start, end, selfish in self.aggregates)

    # -- stepping (``_step``) ----------------------------------------------------------

    def follow(self):
        """Before a simulate, where the window check asks (``_step.Plan.to_follow``): the
        ground's windows moved to the actors (wider ones give the env a new model)."""
        self._follow(self.model, self.data, False)

    def speeds(self):
        """(nv,) each DOF's maximum speed, ``inf`` where it has none (a free root): the
        kernel clamps the velocities to them before each substep and after the last
        (``_native``). The DOF property ``velocity`` ("Maximum velocity of DOF", NVIDIA
        forum's table of the DOF properties) is PhysX's maximum joint velocity, which PhysX
        enforces by clamping each joint velocity of the articulation (PhysX 4.1's
        Featherstone solver: the joint velocities a step starts from, in
        ``computeLinkVelocities``, and the unconstrained ones it ends with, in
        ``computeJointAccelerations``; a clamp in joint space that leaves the root's
        velocity and the other joints' as they are, so it does not conserve momentum
        either)."""
        speed = np.full(self.model.nv, np.inf)
        for actor in self.actors:
            speed[actor.vadr] = actor.max_velocity
        return speed

    def body_speeds(self):
        """(nbody, 2) each body's maximum linear and angular speed, ``inf`` for the ground's:
        its asset's ``max_linear_velocity`` and ``max_angular_velocity`` (AssetOptions:
        "Maximum linear/angular velocity for rigid bodies", 1000 m/s and 64 rad/s unless
        set). PhysX enforces them on each articulation link by a force that takes the excess
        away within the step (``_native.drag``)."""
        speeds = np.full((self.model.nbody, 2), np.inf)
        for actor in self.actors:
            speeds[actor.bodies] = actor.asset.body_speed
        return speeds

    def reshaped(self):
        """After an actor's lengths changed in its model (``ActorSim.set_scale``): what was
        read from them at build follows."""
        self.sim.generation += 1  # the step's plan holds the shapes' bounding radii
        self.moved = True  # the windows are checked against the new sizes at the next simulate

    def look(self):
        """What a camera's renderer took from the model when it was made (it uploads meshes
        and height fields once): the model, where its ground windows lie (their data is
        rewritten in place as they follow the actors) and the actors' scales."""
        return (self.model, self.window.placements(), tuple(a.scale for a in self.actors))

    def has_friction(self):
        return any(actor.has_friction for actor in self.actors)

    def bound_friction(self):
        """Before a substep: each DOF's friction bound from the load its joint carries
        (``_actors``); the load is MuJoCo's ``cfrc_int``, the force each body gets from its
        parent in the last solve."""
        mujoco.mj_rnePostConstraint(self.model, self.data)
        for actor in self.actors:
            if actor.has_friction:
                actor.bound_friction()

    def set_floor(self, floor):
        """PhysX pushes penetrating shapes apart at most at ``max_depenetration_velocity``
        (PhysXParams; legged_gym sets 1 m/s and starts its robots inside the ground).
        MuJoCo's soft contacts recover a penetration ``d`` in about the contact time
        constant ``tc`` (solref), at about ``d / tc``: while the deepest contact needs it,
        ``tc`` grows to ``d / cap``. The time constants are ``max(tc, floor)`` for one floor
        (at least the smallest ``tc``, where they are the contacts' own), so the model is
        changed only when that floor changes (``_step.Plan.prepare``), the pairs' as
        ``mix`` would mix them."""
        self.floor = floor
        model = self.model
        model.geom_solref[:, 0] = np.maximum(self.timeconst, floor)
        weight, rest, first, second = self.pair_timeconsts
        model.pair_solref[:, 0] = weight * np.maximum(first, floor) \
            + rest * np.maximum(second, floor)

    def read_sensors(self, gravity):
        """After the last substep of an env with force sensors, before the new state's
        kinematics, which follow here (the kernel leaves them to this env)."""
        self.sensor_rows = _sensors.rows(self, gravity)
        for function in _native.KINEMATICS:
            function(self.model, self.data)

    # -- state rows (env order: the actors' bodies and DOFs, as the sim's buffers) -----

    def force_sensors(self):
        """(sensors, 6): the readings of the last simulate (zero before the first)."""
        return self.sensor_rows if self.sensor_rows is not None else np.zeros((0, 6))


def _named_bodies(xml):
    """``xml`` with a name on every body and geom, so that excludes and pairs can name
    them."""
    root = ElementTree.fromstring(xml)
    bodies = list(root.iter("body"))  # <default> holds no bodies, but geoms
    shapes = [geom for body in bodies for geom in body.findall("geom")]
    for tag, elements in (("body", bodies), ("geom", shapes)):
        for n, element in enumerate(elements):
            if not element.get("name"):
                element.set("name", "__%s%d" % (tag, n))
    return ElementTree.tostring(root, encoding="unicode")


def _copy_settings(source, target):
    for name in COMPILER:
        if not hasattr(source, name):
            continue
        value = getattr(source, name)
        if isinstance(value, np.ndarray):
            getattr(target, name)[:] = value  # array fields are views, set in place
        else:
            setattr(target, name, value)


def _settings(spec):
    values = [getattr(spec, name) for name in COMPILER if hasattr(spec, name)]
    return [tuple(np.ravel(v).tolist()) if isinstance(v, np.ndarray) else v for v in values]
