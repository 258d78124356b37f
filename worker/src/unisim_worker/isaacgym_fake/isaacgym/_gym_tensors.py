"""Gym: the tensor API (acquire, refresh, set), as the SDK's docstrings describe it.

Buffers are allocated when first acquired, also before ``prepare_sim`` (IsaacGymEnvs'
FrankaCubeStack acquires its tensors in ``create_sim``; see ``SimState.buffer``), and are
the ones ``prepare_sim`` and ``refresh_*`` then fill. Setters take the full buffer ("Full
actor root states buffer should be provided for all actors") and, for the ``_indexed``
forms, an int32 index tensor of actor indices; they return True. When a setter's update
takes effect, per pipeline: ``SimState.set``.
"""

import numpy as np
import torch

from ._actors import TARGETS
from ._enums import TensorDataType
from ._errors import UnwrapError
from ._types import Tensor

# gymtorch's dtype table (the SDK's gymtorch.py): torch dtype -> gym dtype; int32 travels
# as DTYPE_UINT32 and int64 as DTYPE_UINT64
DTYPES = {torch.float32: TensorDataType.DTYPE_FLOAT32, torch.uint8: TensorDataType.DTYPE_UINT8,
          torch.int16: TensorDataType.DTYPE_INT16, torch.int32: TensorDataType.DTYPE_UINT32,
          torch.int64: TensorDataType.DTYPE_UINT64}


def _tensor_of(data):
    """A gym tensor describing torch tensor ``data``; refused as the SDK's gymtorch refuses:
    a strided view, a dtype outside ``DTYPES``, a device other than CPU and CUDA."""
    if not data.is_contiguous():
        raise UnwrapError("unwrap_tensor: the input tensor must be contiguous (the SDK refuses a "
                        "strided view); pass .contiguous()")
    if data.dtype not in DTYPES:
        raise UnwrapError("unwrap_tensor: unsupported Gym tensor dtype %s (the SDK takes float32, "
                        "uint8, int16, int32, int64)" % data.dtype)
    if data.device.type not in ("cpu", "cuda"):
        raise UnwrapError("unwrap_tensor: unsupported Gym tensor device %s (the SDK takes cpu and "
                        "cuda)" % data.device)
    tensor = Tensor()
    tensor._torch = data
    tensor.data_address = data.data_ptr()
    tensor.device = data.device.index if data.is_cuda else -1
    tensor.dtype = DTYPES[data.dtype]
    tensor.shape = tuple(data.shape)
    return tensor


class TensorMixin:
    def _acquire(self, sim, name, call):
        return _tensor_of(sim._state.buffer(name, call))

    def _refresh(self, sim, name, call):
        sim._state.refresh(name)
        return True

    def acquire_actor_root_state_tensor(self, arg0):
        return self._acquire(arg0, "root", "acquire_actor_root_state_tensor")

    def acquire_dof_state_tensor(self, arg0):
        return self._acquire(arg0, "dof", "acquire_dof_state_tensor")

    def acquire_rigid_body_state_tensor(self, arg0):
        return self._acquire(arg0, "rigid_body", "acquire_rigid_body_state_tensor")

    def acquire_net_contact_force_tensor(self, arg0):
        return self._acquire(arg0, "net_contact_force", "acquire_net_contact_force_tensor")

    def acquire_dof_force_tensor(self, arg0):
        return self._acquire(arg0, "dof_force", "acquire_dof_force_tensor")

    def acquire_force_sensor_tensor(self, arg0):
        return self._acquire(arg0, "force_sensor", "acquire_force_sensor_tensor")

    def refresh_force_sensor_tensor(self, arg0):
        return self._refresh(arg0, "force_sensor", "refresh_force_sensor_tensor")

    def refresh_actor_root_state_tensor(self, arg0):
        return self._refresh(arg0, "root", "refresh_actor_root_state_tensor")

    def refresh_dof_state_tensor(self, arg0):
        return self._refresh(arg0, "dof", "refresh_dof_state_tensor")

    def refresh_rigid_body_state_tensor(self, arg0):
        return self._refresh(arg0, "rigid_body", "refresh_rigid_body_state_tensor")

    def refresh_net_contact_force_tensor(self, arg0):
        return self._refresh(arg0, "net_contact_force", "refresh_net_contact_force_tensor")

    def refresh_dof_force_tensor(self, arg0):
        return self._refresh(arg0, "dof_force", "refresh_dof_force_tensor")

    # -- setters ----------------------------------------------------------------------

    def _set(self, sim, setter, tensor, indices, count, width, per_actor):
        """Check the buffer and indices; then ``per_actor(actor, rows)`` for each actor
        indexed (all actors without indices), when the pipeline applies it."""
        state, values, ids = _checked(sim, setter, tensor, indices, count, width)
        per_dof = width == 2  # DOF states; else root states, a row per actor
        offsets = state.dof_offsets()

        def update():
            if not state.prepared:
                state.build()  # a setter before prepare_sim sets the scene built so far
            for index in ids:
                rows = values[offsets[index]:offsets[index + 1]] if per_dof else values[index]
                per_actor(state.actors[index], rows)

        state.set(setter, ids, update)  # after the checks: a refused call sets nothing
        return True

    def _set_targets(self, sim, setter, tensor, indices, count, name):
        """A DOF target setter: the DOFs of the actors indexed (all without indices) into
        their column of the sim's targets (``SimState.targets``), all at once, when the
        pipeline applies it."""
        state, values, ids = _checked(sim, setter, tensor, indices, count, 1)
        column = TARGETS.index(name)

        def update():
            if not state.prepared:
                state.build()  # a setter before prepare_sim sets the scene built so far
            targets = state.targets()
            rows = slice(None) if indices is None else _dof_rows(state.dof_offsets(), ids)
            targets[rows, column] = values[rows, 0]

        state.set(setter, ids, update)  # after the checks: a refused call sets nothing
        return True

    def set_actor_root_state_tensor(self, arg0, arg1):
        return self._set(arg0, "set_actor_root_state_tensor", arg1, None, 0, 13,
                         lambda actor, row: actor.set_root_state(row))

    def set_actor_root_state_tensor_indexed(self, arg0, arg1, arg2, arg3):
        return self._set(arg0, "set_actor_root_state_tensor_indexed", arg1, arg2, arg3, 13,
                         lambda actor, row: actor.set_root_state(row))

    def set_dof_state_tensor(self, arg0, arg1):
        return self._set(arg0, "set_dof_state_tensor", arg1, None, 0, 2,
                         lambda actor, rows: actor.set_dof_states(rows))

    def set_dof_state_tensor_indexed(self, arg0, arg1, arg2, arg3):
        return self._set(arg0, "set_dof_state_tensor_indexed", arg1, arg2, arg3, 2,
                         lambda actor, rows: actor.set_dof_states(rows))

    def set_dof_position_target_tensor(self, arg0, arg1):
        return self._set_targets(arg0, "set_dof_position_target_tensor", arg1, None, 0,
                                 "position_target")

    def set_dof_position_target_tensor_indexed(self, arg0, arg1, arg2, arg3):
        return self._set_targets(arg0, "set_dof_position_target_tensor_indexed", arg1, arg2, arg3,
                                 "position_target")

    def set_dof_velocity_target_tensor(self, arg0, arg1):
        return self._set_targets(arg0, "set_dof_velocity_target_tensor", arg1, None, 0,
                                 "velocity_target")

    def set_dof_velocity_target_tensor_indexed(self, arg0, arg1, arg2, arg3):
        return self._set_targets(arg0, "set_dof_velocity_target_tensor_indexed", arg1, arg2, arg3,
                                 "velocity_target")

    def set_dof_actuation_force_tensor(self, arg0, arg1):
        return self._set_targets(arg0, "set_dof_actuation_force_tensor", arg1, None, 0,
                                 "effort")

    def set_dof_actuation_force_tensor_indexed(self, arg0, arg1, arg2, arg3):
        return self._set_targets(arg0, "set_dof_actuation_force_tensor_indexed", arg1, arg2, arg3,
                                 "effort")


def _checked(sim, setter, tensor, indices, count, width):
    """(the sim's state, the values as (rows, width) float64, the actor indices) of a setter
    call, checked: the full buffer, an int32 index tensor."""
    state = sim._state
    per_dof = width in (1, 2) and setter.startswith("set_dof")
    total = state.count("dofs") if per_dof else state.count("actors")
    values = state.values(tensor, "%s's state tensor" % setter, total, width)
    ids = np.arange(len(state.actors)) if indices is None \
        else state.indices(indices, count, "%s's index tensor" % setter)
    return state, values, ids


def _dof_rows(offsets, ids):
    """The DOF rows of actors ``ids`` (``offsets``: each actor's first), in order."""
    starts, lengths = offsets[ids], offsets[ids + 1] - offsets[ids]
    return np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
