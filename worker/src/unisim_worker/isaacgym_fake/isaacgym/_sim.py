"""A sim: its envs and actors, its state buffers, and the checks of tensors handed in.

Buffers (``acquire_*_tensor``) are torch float32 tensors on the pipeline's device
(``cuda:<compute_device>`` with ``use_gpu_pipeline``, else the CPU: IsaacGymEnvs'
``VecTask`` puts its tensors there); they change only on ``refresh_*`` (the SDK's
tensor API: "refresh" copies the latest state into the buffer).
"""

import sys

import numpy as np
import torch

from ._enums import ContactCollection
from ._env import step_envs
from ._errors import FakeError
from ._ground import Ground
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
        self.setters_since_simulate = set()
        self.cameras = []  # _render.Camera, in creation order
        self.viewers = []
        self._compiled = {}  # an env's actor list (and ground): its compiled MjModel
        self.pool = Pool()  # the threads simulate steps the envs on (``_threads``)

    def compiled(self, key, compile_model):
        if key not in self._compiled:
            self._compiled[key] = compile_model()
        return self._compiled[key]

    # -- counts -----------------------------------------------------------------------

    def dof_offsets(self):
        return np.cumsum([0] + [actor.ndof for actor in self.actors])

    def body_offsets(self):
        return np.cumsum([0] + [actor.nbody for actor in self.actors])

    def count(self, what):
        return {"actors": len(self.actors), "dofs": int(self.dof_offsets()[-1]),
                "bodies": int(self.body_offsets()[-1]),
                "sensors": sum(len(actor.sensors) for actor in self.actors)}[what]

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
        return len(env.actors) - 1

    def changed_ground(self):
        for env in self.envs:
            env.model = None

    def prepare(self):
        if not self.actors:
            print("[isaacgym fake] prepare_sim: the sim has no actors", file=sys.stderr)
            return False
        open_aggregates = [env.index for env in self.envs if env.aggregate is not None]
        if open_aggregates:
            raise FakeError("prepare_sim with an aggregate still open in env %d: call "
                            "end_aggregate after its actors" % open_aggregates[0])
        for env in self.envs:
            env.physics()
        for name, (width, rows) in BUFFERS.items():
            shape = (self.count(rows), width) if width > 1 else (self.count(rows),)
            self.buffers[name] = torch.zeros(shape, dtype=torch.float32, device=self.device)
        self.prepared = True
        for name in BUFFERS:
            self.refresh(name)
        return True

    # -- state ------------------------------------------------------------------------

    def refresh(self, name):
        if name == "dof":  # at every simulate in legged_gym: written in place, no row arrays
            values = np.empty((self.count("dofs"), 2))
            offsets = self.dof_offsets().tolist()
            for actor, start, end in zip(self.actors, offsets[:-1], offsets[1:]):
                actor.dof_states_into(values[start:end])
            self.buffers[name].copy_(torch.from_numpy(values.astype(np.float32)))
            return
        if name == "root":
            rows = [actor.root_state() for actor in self.actors]
        elif name == "rigid_body":
            rows = [actor.body_states() for actor in self.actors]
        elif name == "net_contact_force":
            never = self.params.physx.contact_collection == ContactCollection.CC_NEVER
            rows = [np.zeros((len(env.model.body_mass) - 1, 3)) if never  # "Don't collect"
                    else env.contact_forces() for env in self.envs]
        elif name == "force_sensor":
            rows = [env.force_sensors() for env in self.envs]
        else:
            rows = [actor.dof_force_row() for actor in self.actors]
        values = np.concatenate([np.reshape(r, (-1, *self.buffers[name].shape[1:]))
                                 for r in rows]) if rows else np.zeros(0)
        self.buffers[name].copy_(torch.from_numpy(values.astype(np.float32)))

    def gravity(self):
        g = self.params.gravity
        return [g.x, g.y, g.z]

    def simulate(self):
        """One step of every env, MuJoCo's part on the pool's threads (``_threads``,
        ``_env.step_envs``); models are built first, on this thread (building shares the
        compiled models)."""
        dt, substeps = float(self.params.dt), int(self.params.substeps)
        gravity = np.array(self.gravity(), dtype=np.float64)
        cap = float(self.params.physx.max_depenetration_velocity)
        for env in self.envs:
            env.physics()
        step_envs(self.envs, dt, substeps, gravity, cap, self.pool)
        self.time += dt
        self.frames += 1
        self.setters_since_simulate = set()

    # -- tensors handed in ------------------------------------------------------------

    def once_per_step(self, setter):
        """The SDK applies one call of each setter per simulate: the last one (IsaacGymEnvs
        #181, NVIDIA forum). The fake refuses the second call instead of losing the first."""
        if setter in self.setters_since_simulate:
            raise FakeError("%s called twice before simulate: the SDK keeps only the last call "
                            "of a setter per step, so the first call's rows would be lost; "
                            "call it once with the union of the indices" % setter)
        self.setters_since_simulate.add(setter)

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
    if data is None:
        raise FakeError("%s must be a gymapi.Tensor from gymtorch.unwrap_tensor, got %r"
                        % (what, type(tensor).__name__))
    return data
