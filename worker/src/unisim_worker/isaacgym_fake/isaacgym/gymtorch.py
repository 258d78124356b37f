"""The fake ``isaacgym.gymtorch``: gym tensors <-> torch tensors, sharing memory.

As in the SDK's gymtorch.py: ``wrap_tensor`` gives a torch view of a gym buffer (so the
view changes when the sim refreshes the buffer), ``unwrap_tensor`` describes a torch
tensor's memory for the sim's setters.
"""

import torch  # noqa: F401  (the SDK's gymtorch imports torch: it must come after isaacgym)

from ._gym_tensors import _tensor_of


def wrap_tensor(gym_tensor, offsets=None, counts=None):
    data = getattr(gym_tensor, "_torch", None)
    if data is None:
        raise TypeError("wrap_tensor takes a gymapi.Tensor (from acquire_*_tensor), got %r"
                        % type(gym_tensor).__name__)
    if offsets is not None or counts is not None:
        offsets = tuple(offsets or (0,) * data.dim())
        counts = tuple(counts or data.shape)
        for axis, (start, count) in enumerate(zip(offsets, counts)):
            data = data.narrow(axis, start, count)
    return data


def unwrap_tensor(torch_tensor):
    return _tensor_of(torch_tensor)
