"""MuJoCo MJX on JAX: ``num_envs`` simulations whose state never leaves the device.

The whole batch is one ``mjx.Data`` with a leading env axis, stepped by one jitted,
vmapped function (compiled once in ``init``, whatever the number of substeps). How the
slots are reached is chosen once, in ``attach``:

* slots in the host's CUDA arena (``data_plane="cuda"``): the ctrl region is imported through
  DLPack on every step and read by the step program itself; the import's stream waits for
  ``ctrl_ready`` on the GPU. The new qpos and qvel are copied device-to-device into the
  arena, and the reply waits for the copies. No host copy on the step path.
* slots in host shared memory (``data_plane="shm"``): ctrl is copied to the device and the
  state back to the host every step, the baseline the CUDA plane is measured against.

JAX, MuJoCo and MJX are imported in ``init`` only. Set ``JAX_COMPILATION_CACHE_DIR`` in the
host's environment (the worker inherits it) to reuse compiled steps across workers.
"""

import contextlib
import os

import numpy as np

from ..base import Engine, EngineFault
from ..mjmodel import Scene


def initial_data(mujoco, mjx, jax, model, num_envs, device, key_id):
    """``num_envs`` copies of the reset state (or keyframe ``key_id``) on ``device``."""
    data = mujoco.MjData(model)
    if key_id is None:
        mujoco.mj_resetData(model, data)
    else:
        mujoco.mj_resetDataKeyframe(model, data, key_id)
    mujoco.mj_forward(model, data)
    one = mjx.put_data(model, data, device=device, impl="jax")
    return jax.tree_util.tree_map(
        lambda leaf: jax.numpy.broadcast_to(leaf, (num_envs, *leaf.shape)), one)


def finite_or_zero(numpy, x):
    """``x`` with its NaN and infinite values replaced by 0, by a kernel that reads ``x``."""
    return numpy.where(numpy.isfinite(x), x, 0)


def batched_step(jax, mjx):
    """``step(model, data, ctrl, substeps) -> data`` for a batch; one compile per batch shape.

    Non-finite controls are zeroed for the step; MJX would carry them into the state.
    """

    def one(model, data, ctrl, substeps):
        data = data.replace(ctrl=finite_or_zero(jax.numpy, ctrl))
        return jax.lax.fori_loop(0, substeps, lambda _, d: mjx.step(model, d), data)

    return jax.jit(jax.vmap(one, in_axes=(None, 0, 0, None)))


def _reset_rows(jax):
    def reset(data, initial, mask, qpos, qvel):
        def pick(new, old):
            return jax.numpy.where(mask.reshape((-1,) + (1,) * (old.ndim - 1)), new, old)

        data = jax.tree_util.tree_map(pick, initial, data)
        if qpos is not None:
            data = data.replace(qpos=pick(qpos, data.qpos))
        if qvel is not None:
            data = data.replace(qvel=pick(qvel, data.qvel))
        return data

    return jax.jit(reset)


def jax_device(jax, request):
    """The JAX device for the INIT payload's ``device`` entry (by UUID when given)."""
    if request is None:
        return jax.devices()[0]
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as exc:
        raise ValueError("a GPU was requested but JAX here has no GPU backend (%s); install "
                         "jax with CUDA support in the worker's environment" % exc) from None
    if request.get("uuid") is not None:
        from unisim_protocol.cuda_driver import driver

        ordinal = driver().ordinal_of(request["uuid"])
    else:
        ordinal = int(request["ordinal"])
    matches = [d for d in gpus if d.local_hardware_id == ordinal]
    if not matches:
        raise ValueError("GPU %d was requested but JAX here sees only %s" % (ordinal, gpus))
    return matches[0]


class HostSlots:
    """Slots in host shared memory: copied to the device and back on every call."""

    def __init__(self, jax, device, slots):
        self.jax = jax
        self.device = device
        self.slots = slots

    def read(self, name):
        return self.jax.device_put(self.slots[name], self.device)

    def controls(self):
        return self.read("ctrl")

    def publish(self, arrays):
        """Every copy starts before the first is waited for: each wait for a device-to-host
        copy has a fixed cost, large beside the copy of a few rows, so a step pays it once."""
        for array in arrays.values():
            array.copy_to_host_async()
        for name, array in arrays.items():
            self.slots[name][...] = np.asarray(array)

    def guard(self):
        """Copies to the host are this plane's job."""
        return contextlib.nullcontext()

    def close(self):
        """Nothing to release: the host owns the shared memory."""


class DeviceSlots:
    """Slots in the host's CUDA arena: read and written by device-to-device copies."""

    def __init__(self, jax, slots):
        from jax.dlpack import from_dlpack

        self.jax = jax
        self.from_dlpack = from_dlpack
        # XLA runs programs as CUDA graphs, whose copy nodes refuse memory opened by IPC:
        # a region passed through unchanged is first moved into a JAX buffer by a kernel.
        self.take = jax.jit(lambda x: finite_or_zero(jax.numpy, x))
        self.regions = slots
        self.mapping = slots["ctrl"].owner

    def read(self, name):
        return self.take(self.from_dlpack(self.regions[name]))

    def controls(self):
        """The ctrl region, imported anew on every step: JAX hands the import a stream of its
        own, which the region makes wait for the host's ``ctrl_ready`` (a GPU-side wait; a
        wait on the CPU here held every step until the GPU had drained, 5-8% at N <= 4096)."""
        return self.from_dlpack(self.regions["ctrl"])

    def publish(self, arrays):
        self.mapping.publish(arrays)

    def guard(self):
        """A context in which any device-to-host copy by JAX raises: none belongs in a step."""
        return self.jax.transfer_guard_device_to_host("disallow_explicit")

    def close(self):
        self.mapping.close()


class MjxEngine(Engine):
    device_resident = True

    def __init__(self):
        self.io = None
        self.data = None

    def init(self, spec, worker):
        # The GPU is shared with the host (torch) and other workers: take memory as needed,
        # not JAX's default 75% up front.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax
        import mujoco
        from mujoco import mjx

        scene = Scene(mujoco, spec)
        model, num_envs, key_id = scene.model, scene.num_envs, scene.key_id
        self.jax = jax
        self.device = jax_device(jax, spec.get("device"))
        worker.progress(0, 2, "putting %d MJX simulations on %s" % (num_envs, self.device))
        self.model = mjx.put_model(model, device=self.device, impl="jax")
        self.initial = initial_data(mujoco, mjx, jax, model, num_envs, self.device, key_id)
        self.data = self.initial
        self.step_fn = batched_step(jax, mjx)
        self.reset_fn = _reset_rows(jax)
        worker.progress(1, 2, "compiling the MJX step (tens of seconds, once per shape)")
        ctrl = jax.numpy.zeros((num_envs, model.nu), self.data.ctrl.dtype, device=self.device)
        self.step_fn(self.model, self.data, ctrl, 1).qpos.block_until_ready()
        dtype = np.dtype(self.data.qpos.dtype).str
        return scene.layout("mjx", "mujoco %s, jax %s" % (mujoco.__version__, jax.__version__),
                            "mjx-jax on %s" % self.device, dtype)

    def attach(self, slots):
        if isinstance(slots["ctrl"], np.ndarray):
            self.io = HostSlots(self.jax, self.device, slots)
        else:
            self.io = DeviceSlots(self.jax, slots)
        self.mask = slots["reset_mask"]
        self._publish()

    def _publish(self):
        self.io.publish({"qpos": self.data.qpos, "qvel": self.data.qvel})

    def step(self, substeps):
        with self.io.guard():
            ctrl = self.io.controls()
            try:
                self.data = self.step_fn(self.model, self.data, ctrl, substeps)
            except Exception as exc:
                raise EngineFault("MJX step failed: %s" % exc) from exc
            self._publish()

    def reset(self, use_qpos, use_qvel):
        mask = self.jax.device_put(self.mask.astype(bool), self.device)
        qpos = self.io.read("qpos") if use_qpos else None
        qvel = self.io.read("qvel") if use_qvel else None
        self.data = self.reset_fn(self.data, self.initial, mask, qpos, qvel)
        self._publish()

    def close(self):
        self.data = self.initial = None
        if self.io is not None:
            self.io.close()
            self.io = None


ENGINE = MjxEngine
