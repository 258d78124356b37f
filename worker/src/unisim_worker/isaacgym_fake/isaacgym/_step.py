"""One ``gym.simulate`` of a sim's envs: ``substeps`` MuJoCo steps of ``dt / substeps``.

Each substep of a chunk of envs is one call of the C kernel (``_native``) on a thread of the
sim's pool (``_threads``), over ``Plan``'s table of the envs' rows; what stays in Python is
done for all envs at once (the depenetration floors, the windows' check) or only for the
envs that need it (an env a setter moved, one whose actors near its window's edge, joint
friction, force sensors, ``CC_ALL_SUBSTEPS``), on the calling thread, chunk after chunk
while the pool steps the chunks handed to it. Envs are independent, so each env's results
are the same for any chunks and threads.

It reports what its solver computed, as the SDK reports what its last simulate computed:
``mj_step`` solves at the state a substep starts from and then integrates, so after the
last one ``data.contact``, ``efc_force``, ``qacc`` and the actuator forces are those of its
solve. They stay so (net contact forces and DOF forces read them; force sensors are read
before the kinematics); only the kinematics of the new state follow (bodies, centres of
mass, velocities), with no new collision or solve. Under ``CC_ALL_SUBSTEPS`` (the docs'
tensors.html: "the reported net contact forces will be aggregated for all substeps") each
substep's net contact forces are kept, and their mean, the step's impulse over ``dt``, is
reported.
"""

import ctypes

import numpy as np

from . import _native
from ._enums import ContactCollection


class Plan:
    """The kernel's table (``_native.ROW``), a row per env of ``envs``, the arrays its rows
    point to, and the per-env figures the Python between substeps reads. Made again when an
    env's model is rebuilt or its DOF properties change (``SimState.generation``)."""

    def __init__(self, envs, generation):
        self.envs, self.generation = list(envs), generation
        self.table = np.zeros(len(envs), dtype=_native.ROW)
        self.keep = []  # per row, the arrays it points to (``_native.substep_python``)
        starts = np.zeros(3, dtype=np.int64)  # the next env's first DOF, body and actor rows
        for row, env in zip(self.table, envs):
            model, data = env.physics()
            shapes = env.window.shapes
            radius = np.ascontiguousarray(model.geom_rbound[shapes])
            qadr = _indices([actor.qadr for actor in env.actors])
            vadr = _indices([actor.vadr for actor in env.actors])
            root_q = _indices([[a.root_q if a.free else -1] for a in env.actors])
            root_v = _indices([[a.root_v if a.free else -1] for a in env.actors])
            actuators = _indices([actor.actuators for actor in env.actors])
            sources = _indices([actor.sources for actor in env.actors])
            speed, body_speed = env.speeds(), env.body_speeds()
            self.keep.append((model, data, speed, body_speed, shapes, radius, qadr, vadr,
                              root_q, root_v, actuators, sources))
            counts = (len(qadr), sum(actor.nbody for actor in env.actors), len(env.actors))
            row["model"], row["data"], row["speed"] = model._address, data._address, \
                speed.ctypes.data
            row["body_speed"] = body_speed.ctypes.data
            row["shapes"], row["radius"] = shapes.ctypes.data, radius.ctypes.data
            row["nshape"] = len(shapes) if env.window.panes else 0
            row["kinematics"] = env.sensor_rows is None  # else sensors are read first
            row["qadr"], row["vadr"], row["root_q"], row["root_v"] = (
                qadr.ctypes.data, vadr.ctypes.data, root_q.ctypes.data, root_v.ctypes.data)
            row["actuators"], row["sources"] = actuators.ctypes.data, sources.ctypes.data
            row["ndof"], row["nbody"], row["nactor"] = counts
            row["dof_start"], row["body_start"], row["actor_start"] = starts
            starts += counts
            row["out"][_native.DEEPEST] = _native.deepest(data)
            if len(shapes):
                row["out"][_native.BOX] = _native.box(data, shapes, radius)
        pairs = [(env, actor) for env in envs for actor in env.actors]
        self.root_ipos = np.array([env.model.body_ipos[actor.bodies[0]]
                                   for env, actor in pairs]).reshape(-1, 3)
        self.actor_origins = np.array([env.origin for env, _ in pairs]).reshape(-1, 3)
        self.free = np.array([actor.free for _, actor in pairs], dtype=bool)
        self.origins = np.array([np.tile(env.origin[0:2], 2) for env in envs]).reshape(-1, 4)
        self.interior = np.array([env.window.interior() for env in envs]).reshape(-1, 4)
        self.shallow = np.array([env.shallow for env in envs])
        self.floor = np.array([env.floor for env in envs])
        self.friction = [k for k, env in enumerate(envs) if env.has_friction()]
        self.sensing = np.flatnonzero(self.table["kinematics"] == 0).tolist()
        self.settings = None  # (dt, substeps, gravity) the models were last given

    def to_follow(self):
        """The rows of the envs whose windows must be checked in Python: moved by a setter
        since their last step, or with actors near their window's edge (``_window``)."""
        box = self.table["out"][:, _native.BOX] + self.origins
        held = np.all(box[:, 0:2] >= self.interior[:, 0:2], axis=1) \
            & np.all(box[:, 2:4] <= self.interior[:, 2:4], axis=1)
        moved = np.array([env.moved for env in self.envs], dtype=bool)
        return np.flatnonzero(moved | ~held).tolist()

    def configure(self, dt, substeps, gravity):
        settings = (dt, substeps, tuple(gravity.tolist()))
        if settings != self.settings:
            for env in self.envs:
                env.model.opt.timestep = dt / substeps
                env.model.opt.gravity[:] = gravity
            self.settings = settings

    def prepare(self, rows, cap):
        """Before a substep of envs ``rows`` (a slice): the depenetration floors that changed
        (``EnvSim.set_floor``), the joint friction bounds."""
        depth = self.table["out"][rows, _native.DEEPEST]
        floor = np.maximum(depth / max(cap, 1e-9), self.shallow[rows])
        for k in np.flatnonzero(floor != self.floor[rows]).tolist():
            self.envs[rows.start + k].set_floor(float(floor[k]))
            self.floor[rows.start + k] = floor[k]
        for k in self.friction:
            if rows.start <= k < rows.stop:
                self.envs[k].bound_friction()

    def substep(self, rows, last):
        """The kernel's substep over envs ``rows`` (a slice)."""
        self._call("substep", rows, int(last))

    def controls(self, targets):
        """Every env's actuator inputs from ``targets`` (DOFs x 3, ``SimState.targets``)."""
        self._call("controls", slice(0, len(self.envs)), targets)

    def dof_states(self, out):
        """Every env's DOF states into ``out`` (DOFs x 2, float64, C order)."""
        self._call("dof_states", slice(0, len(self.envs)), out)

    def roots(self, out):
        """Every free root's joint state (qpos 7, qvel 6) into its row of ``out`` (actors x
        13, float64, C order); fixed roots' rows are left as they are."""
        self._call("roots", slice(0, len(self.envs)), out)

    def contact_forces(self, out):
        """Every env's net contact forces of the last solve, added into ``out`` (bodies x 3,
        float64, C order)."""
        self._call("contact_forces", slice(0, len(self.envs)), out)

    def _call(self, name, rows, last):
        """C function ``unisim_<name>`` over the table's ``rows``, or its Python twin."""
        functions = _native.native()
        if functions is None:
            getattr(_native, name + "_python")(self.table[rows], self.keep[rows], last)
            return
        address = self.table.ctypes.data + rows.start * self.table.itemsize
        argument = last.ctypes.data if isinstance(last, np.ndarray) else last
        functions[name](ctypes.c_void_p(address), rows.stop - rows.start, argument)


def step_envs(state, dt, substeps, gravity, cap):
    """One simulate of ``state``'s envs (``SimState``), as the module's docstring says."""
    plan = state.plan()
    for k in plan.to_follow():
        env = plan.envs[k]
        env.follow()  # a window grown rebuilds the env's model: the plan is made again
        env.moved = False
        if state.plan() is plan:
            plan.interior[k] = env.window.interior()
    plan = state.plan()
    plan.configure(dt, substeps, gravity)
    every = substeps > 1 and (state.params.physx.contact_collection
                              == ContactCollection.CC_ALL_SUBSTEPS)
    plan.controls(state.targets())
    forces = np.zeros((state.count("bodies"), 3)) if every else None
    count = len(plan.envs)
    threads = state.pool.threads() if count > 1 and _native.native() is not None else 1
    size = -(-count // (2 * threads)) if threads > 1 else count  # two per thread: a balanced end
    chunks = [slice(k, min(k + size, count)) for k in range(0, count, size)]
    run = state.pool.submit if threads > 1 else _at_once
    for substep in range(substeps):
        last = substep == substeps - 1
        waits = []
        for rows in chunks:
            plan.prepare(rows, cap)
            waits.append(run(plan.substep, rows, last))
        for wait in waits:
            wait()
        if every:
            plan.contact_forces(forces)
    for env in plan.envs:
        env.solved = True
    state.step_forces = forces / substeps if every else None
    for k in plan.sensing:
        plan.envs[k].read_sensors(gravity)
        plan.envs[k].moved = True  # its box is not in the table: the window checked in Python


def _indices(parts):
    """``parts`` (sequences of indices) end to end, as the C side reads them: int64."""
    return np.concatenate([np.zeros(0, np.int64)] + [np.asarray(p, np.int64) for p in parts])


def _at_once(function, *args):
    """``function(*args)`` now, on this thread; returns a wait that has nothing to wait for
    (``Pool.submit``'s form)."""
    function(*args)
    return _done


def _done():
    pass
