"""A sim: its envs and actors, its state buffers, its tensor setters' calls, and the checks
of tensors handed in.

Buffers (``acquire_*_tensor``) are torch float32 tensors on the pipeline's device
(``cuda:<compute_device>`` with ``use_gpu_pipeline``, else the CPU: IsaacGymEnvs'
``VecTask`` puts its tensors there); they change only on ``refresh_*`` (the SDK's
tensor API: "refresh" copies the latest state into the buffer).

Setters called more than once between two simulates (the IsaacGym docs, Tensor API,
"Limitations", programming/tensors.html): the GPU pipeline records a setter's values and
applies them at the next ``simulate``, and "there should only be one call to a specific
setter function in between calls to gym.simulate"; these limitations "don't apply with the
CPU pipeline". IsaacGymEnvs issue #181 (a maintainer, citing the NVIDIA forum): "setter
functions ... should only be called once in each simulation step". So the fake applies each
call at once on the CPU pipeline, and on the GPU pipeline keeps only the last call of each
setter until ``simulate``. The indices are read during the call (the docs' "Tensor
Lifetime": a temporary index tensor must live until the call); the fake takes the values
then too. Rows of an earlier call that the last one leaves out are lost on the GPU pipeline:
the fake warns (``_errors.suspect``), on the CPU pipeline too, where they were applied but
the same code on the GPU would lose them.
"""

import sys

import numpy as np
import torch

from ._actors import TARGETS, root_rows
from ._enums import ContactCollection
from ._errors import FakeError, suspect
from ._ground import Ground
from ._step import Plan, step_envs
from ._threads import Pool

BUFFERS = {  # name: (columns per row, rows counted in)
    "root": (13, "actors"), "dof": (2, "dofs"), "rigid_body": (13, "bodies"),
    "net_contact_force": (3, "bodies"), "dof_force": (1, "dofs"), "force_sensor": (6, "sensors"),
}


class SimState:
    def __init__(self, compute_device, graphics_device, params):
        self.compute_device = int(compute_device)
        self.graphics_device = int(graphics_device)
        self.params = params
        self.gpu = bool(params.use_gpu_pipeline)
        self.device = torch.device("cuda:%d" % self.compute_device if self.gpu else "cpu")
        self.ground = Ground()
        self.envs = []  # EnvSim, in creation order
        self.actors = []  # ActorSim, in sim (creation) order
        self.prepared = False
        self.destroyed = False
        self.buffers = {}
        self.time = 0.0
        self.frames = 0
        self.setter_rows = {}  # setter: actor indices of its last call since simulate
        self.pending = {}  # GPU pipeline: setter: its last call's update, applied by simulate
        self.cameras = []  # _render.Camera, in creation order
        self.viewers = []
        self._compiled = {}  # an env's actor list (and ground): its compiled MjModel
        self.pool = Pool()  # the threads simulate steps the envs on (``_threads``)
        self.generation = 0  # counts the changes a step's plan depends on (``_step``)
        self.step_forces = None  # CC_ALL_SUBSTEPS: the last simulate's mean contact forces
        self._plan = None
        self._offsets = None  # ``_sizes``
        self._targets = None  # ``targets``

    def compiled(self, key, compile_model):
        if key not in self._compiled:
            self._compiled[key] = compile_model()
        return self._compiled[key]

    # -- counts -----------------------------------------------------------------------

    def dof_offsets(self):
        return self._sizes()[0]

    def body_offsets(self):
        return self._sizes()[1]

    def count(self, what):
        dofs, bodies, sensors = self._sizes()
        return {"actors": len(self.actors), "dofs": int(dofs[-1]), "bodies": int(bodies[-1]),
                "sensors": sensors}[what]

    def _sizes(self):
        """Each actor's first DOF and body rows (read-only), and the sensor count: kept
        until an actor is added (setters and refreshes ask at every simulate)."""
        if self._offsets is None:
            dofs = np.cumsum([0] + [actor.ndof for actor in self.actors])
            bodies = np.cumsum([0] + [actor.nbody for actor in self.actors])
            dofs.setflags(write=False)
            bodies.setflags(write=False)
            self._offsets = dofs, bodies, sum(len(actor.sensors) for actor in self.actors)
        return self._offsets

    def targets(self):
        """(DOFs, 3): every DOF's position target, velocity target and actuation force, one
        column each (``_actors.TARGETS``); each actor's attributes are views of its rows,
        taken over (values kept) when the DOFs are first counted or change."""
        if self._targets is None or len(self._targets) != self.count("dofs"):
            targets = np.zeros((self.count("dofs"), 3))
            for actor, start in zip(self.actors, self.dof_offsets().tolist()):
                for column, name in enumerate(TARGETS):
                    view = targets[start:start + actor.ndof, column]
                    view[:] = getattr(actor, name)
                    setattr(actor, name, view)
            self._targets = targets
        return self._targets

    # -- building ---------------------------------------------------------------------

    def check_building(self, call):
        if self.prepared:
            raise FakeError("%s after prepare_sim: the SDK allocates its buffers in "
                            "prepare_sim; build the whole scene first" % call)

    def add_actor(self, env, actor):
        self.check_building("create_actor")
        if self.envs[-1] is not env:
            raise FakeError("create_actor in env %d after env %d was created: the SDK needs "
                            "each env's actors created before the next create_env"
                            % (env.index, self.envs[-1].index))
        env.add(actor)
        self.actors.append(actor)
        self._offsets = None
        return len(env.actors) - 1

    def close_aggregate(self, env):
        _, _, self_collision, first = env.aggregate
        env.aggregates.append((first, len(env.actors), self_collision))
        env.aggregate = None
        env.model = None

    def close_open_aggregates(self, call):
        """An aggregate left open (no end_aggregate) when ``call`` comes: the docs enclose an
        aggregate's create_actor calls between begin_aggregate and end_aggregate and say no
        more; the fake closes it, with a warning."""
        for env in self.envs:
            if env.aggregate is not None:
                suspect(("aggregate", call), "%s with an aggregate still open in env %d: the "
                        "fake closes it; call end_aggregate after its actors"
                        % (call, env.index))
                self.close_aggregate(env)

    def changed_ground(self):
        for env in self.envs:
            env.model = None

    def prepare(self):
        if not self.actors:
            print("[isaacgym fake] prepare_sim: the sim has no actors", file=sys.stderr)
            return False
        self.close_open_aggregates("prepare_sim")
        self.build()
        for name in BUFFERS:
            self.buffer(name, "prepare_sim")
        self.prepared = True
        for name in BUFFERS:
            self.refresh(name)
        return True

    def buffer(self, name, call):
        """State buffer ``name``, allocated when first acquired, before ``prepare_sim`` too:
        IsaacGymEnvs' FrankaCubeStack acquires and wraps its state tensors in ``create_sim``
        (``init_data``) and reads them after ``prepare_sim``, which VecTask calls next, so
        the tensor handed out early is the one the sim fills. If actors were created since,
        the buffer is resized in place (same torch storage) and the caller warned."""
        width, rows = BUFFERS[name]
        shape = (self.count(rows), width) if width > 1 else (self.count(rows),)
        data = self.buffers.get(name)
        if data is None:
            data = self.buffers[name] = torch.zeros(shape, dtype=torch.float32,
                                                    device=self.device)
        elif tuple(data.shape) != shape:
            suspect(("resized", name), "%s: the %s tensor was acquired for %d rows and the "
                    "sim now has %d (actors were created after it was acquired); tensors "
                    "wrapped before keep the old shape: acquire and wrap again after the "
                    "last create_actor" % (call, name, data.shape[0], shape[0]))
            data.resize_(shape).zero_()
        return data

    # -- state ------------------------------------------------------------------------

    def build(self):
        """Every env's model, with the actors created so far (state before prepare_sim)."""
        for env in self.envs:
            env.physics()

    def refresh(self, name):
        self.buffer(name, "refresh")
        if not self.prepared:
            self.build()  # a refresh before prepare_sim reads the scene built so far
        if name == "dof":  # at every simulate in legged_gym
            values = np.empty((self.count("dofs"), 2))
            self.plan().dof_states(values)
            self.buffers[name].copy_(torch.from_numpy(values.astype(np.float32)))
            return
        if name == "net_contact_force":
            self.buffers[name].copy_(torch.from_numpy(self.contact_forces().astype(np.float32)))
            return
        if name == "root":
            self.buffers[name].copy_(torch.from_numpy(self.root_states().astype(np.float32)))
            return
        elif name == "rigid_body":
            rows = [actor.body_states() for actor in self.actors]
        elif name == "force_sensor":
            rows = [env.force_sensors() for env in self.envs]
        else:
            rows = [actor.dof_force_row() for actor in self.actors]
        values = np.concatenate([np.reshape(r, (-1, *self.buffers[name].shape[1:]))
                                 for r in rows]) if rows else np.zeros(0)
        self.buffers[name].copy_(torch.from_numpy(values.astype(np.float32)))

    def root_states(self):
        """(actors, 13): every actor's root state (``_actors.root_rows``), the free roots'
        joint states gathered by the step's kernel."""
        plan = self.plan()
        joints = np.zeros((len(self.actors), 13))
        plan.roots(joints)
        free = plan.free
        rows = np.zeros((len(self.actors), 13))
        rows[free] = root_rows(joints[free], plan.root_ipos[free], plan.actor_origins[free])
        for k in np.flatnonzero(~free).tolist():
            rows[k] = self.actors[k].root_state()
        return rows

    def contact_forces(self):
        """(bodies, 3): each body's net contact force, world frame, of the last simulate
        (``_step``): zero before an env's first, and under ``CC_NEVER`` ("Don't collect")."""
        forces = np.zeros((self.count("bodies"), 3))
        if self.params.physx.contact_collection == ContactCollection.CC_NEVER:
            return forces
        if self.step_forces is not None:  # CC_ALL_SUBSTEPS: their mean
            forces[:] = self.step_forces
        else:
            self.plan().contact_forces(forces)
        table = self.plan().table
        for k in [k for k, env in enumerate(self.envs) if not env.solved]:
            start = table["body_start"][k]
            forces[start:start + table["nbody"][k]] = 0.0
        return forces

    def gravity(self):
        g = self.params.gravity
        return [g.x, g.y, g.z]

    def simulate(self):
        """One step of every env, MuJoCo's part on the pool's threads (``_threads``,
        ``_step``), after the setters' pending updates; models are built first, on
        this thread (building shares the compiled models)."""
        for update in self.pending.values():
            update()
        self.pending.clear()
        self.setter_rows.clear()
        dt, substeps = float(self.params.dt), int(self.params.substeps)
        gravity = np.array(self.gravity(), dtype=np.float64)
        cap = float(self.params.physx.max_depenetration_velocity)
        self.build()
        step_envs(self, dt, substeps, gravity, cap)
        self.time += dt
        self.frames += 1

    def plan(self):
        """The step's plan of the envs (``_step.Plan``), made again after a change."""
        if self._plan is None or self._plan.generation != self.generation:
            self._plan = Plan(self.envs, self.generation)
        return self._plan

    # -- tensors handed in ------------------------------------------------------------

    def set(self, setter, ids, update):
        """One call of tensor setter ``setter`` on actor indices ``ids``: ``update()`` now
        on the CPU pipeline, at the next ``simulate`` on the GPU pipeline, where a later
        call of the same setter replaces it (see the module's docstring)."""
        earlier = self.setter_rows.get(setter)
        lost = np.setdiff1d(earlier, ids) if earlier is not None else ()
        if len(lost):
            listed = ", ".join(str(int(i)) for i in lost[:20]) + (", ..." if len(lost) > 20
                                                                   else "")
            suspect(("setter", setter), "%s called again before simulate without actor "
                    "indices [%s] (%d) of its earlier call: the GPU pipeline applies only the "
                    "last call of a setter per simulate, so it %s those rows (IsaacGym docs, "
                    "Tensor API, Limitations): pass the union of the indices in one call"
                    % (setter, listed, len(lost), "drops" if self.gpu
                       else "would drop (the CPU pipeline applied)"))
        self.setter_rows[setter] = ids
        if self.gpu:
            self.pending.pop(setter, None)
            self.pending[setter] = update
        else:
            update()

    def values(self, tensor, what, rows, width):
        """The torch tensor behind ``tensor``, checked: float32, the pipeline's device,
        ``rows * width`` elements (unwrap_tensor refused a strided one); returned as
        (rows, width) float64 numpy."""
        data = _torch_of(tensor, what)
        self._check_device(data, what)
        if data.dtype != torch.float32:
            raise FakeError("%s must be float32, got %s" % (what, data.dtype))
        if data.numel() != rows * width:
            raise FakeError("%s has shape %s (%d values); the SDK expects the full buffer of "
                            "%d rows x %d" % (what, tuple(data.shape), data.numel(), rows, width))
        return data.detach().reshape(rows, width).cpu().numpy().astype(np.float64)

    def indices(self, tensor, count, what):
        """Actor indices: an int32 tensor on the pipeline's device, ``count`` first entries."""
        data = _torch_of(tensor, what)
        self._check_device(data, what)
        if data.dtype != torch.int32:
            raise FakeError("%s must be an int32 tensor (the SDK reads 32-bit indices, so an "
                            "int64 tensor would be read as wrong indices), got %s: use "
                            ".to(torch.int32)" % (what, data.dtype))
        count = int(count)
        if not 0 <= count <= data.numel():
            raise FakeError("%s has %d entries; the count given is %d" % (
                what, data.numel(), count))
        ids = data.reshape(-1)[:count].cpu().numpy().astype(np.int64)
        bad = ids[(ids < 0) | (ids >= len(self.actors))]
        if len(bad):
            raise FakeError("%s holds actor indices %s outside [0, %d)" % (
                what, sorted(set(bad.tolist())), len(self.actors)))
        return ids

    def _check_device(self, data, what):
        if data.device != self.device:
            raise FakeError("%s is on %s, but this sim's %s pipeline keeps tensors on %s" % (
                what, data.device, "GPU" if self.gpu else "CPU", self.device))


def _torch_of(tensor, what):
    data = getattr(tensor, "_torch", None)
    if data is None:  # the SDK's binding refuses it: pybind11's TypeError
        raise TypeError("%s must be a gymapi.Tensor from gymtorch.unwrap_tensor, got %r"
                        % (what, type(tensor).__name__))
    return data
