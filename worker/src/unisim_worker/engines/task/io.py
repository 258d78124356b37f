"""Where a bridged task's slots live, chosen once in ``attach``.

* ``HostIO``: host shared memory. Every slot is a torch tensor over the shared numpy array
  (``torch.from_numpy``, no copy): on the CPU pipeline the task reads its actions straight
  from the ``ctrl`` slot; on the GPU pipeline they go to the device and the outputs come
  back, once per step each.
* ``DeviceIO``: the host's CUDA arena (``data_plane="cuda"``, GPU pipeline): the regions
  are torch CUDA tensors; the task reads its actions from the ``ctrl`` region, ordered
  after the host's writes (``ctrl_ready``), and its outputs go out by
  ``DeviceMapping.publish``. No host copy on the step path.

Imported by the engine once the user's task is built (torch after isaacgym).
"""

import numpy as np
import torch

ACTIONS = "ctrl"


def _as_slot(value, target):
    """``value`` (a tensor, or None for zeros) in ``target``'s dtype, device and shape."""
    if value is None:
        return torch.zeros_like(target)
    if not isinstance(value, torch.Tensor):
        value = torch.as_tensor(value)
    return value.to(device=target.device, dtype=target.dtype).reshape(target.shape)


class HostIO:
    def __init__(self, slots, device):
        self.device = torch.device(device)
        self.tensors = {name: torch.from_numpy(array) for name, array in slots.items()
                        if isinstance(array, np.ndarray)}

    def begin(self):
        """The host wrote before it sent the request: nothing to order."""

    def actions(self):
        return self.tensors[ACTIONS].to(self.device)  # no copy on the CPU pipeline

    def read(self, name):
        return self.tensors[name].to(self.device)

    def publish(self, values):
        for name, value in values.items():
            target = self.tensors[name]
            target.copy_(_as_slot(value, target))

    def close(self):
        """Nothing to release: the host owns the shared memory."""


class DeviceIO:
    def __init__(self, slots, device):
        from unisim_protocol.cuda_driver import driver

        self.device = torch.device(device)
        torch.cuda.set_device(self.device)
        regions = {name: r for name, r in slots.items() if not isinstance(r, np.ndarray)}
        self.mapping = regions[ACTIONS].owner
        self.tensors = {name: torch.as_tensor(region, device=self.device)
                        for name, region in regions.items()}
        self.driver = driver()

    def begin(self):
        """Order this request's GPU work after the host's writes (``ctrl_ready``)."""
        stream = torch.cuda.current_stream(self.device).cuda_stream
        self.driver.wait(stream, self.mapping.ctrl_ready)

    def actions(self):
        return self.tensors[ACTIONS]

    def read(self, name):
        return self.tensors[name]

    def publish(self, values):
        self.mapping.publish({name: _as_slot(value, self.tensors[name]).contiguous()
                              for name, value in values.items()})

    def close(self):
        self.mapping.close()
