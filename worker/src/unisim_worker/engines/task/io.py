"""Where a bridged task's slots live, chosen once in ``attach``.

* ``HostIO``: host shared memory. Every slot is a torch tensor over the shared numpy array
  (``torch.from_numpy``, no copy): on the CPU pipeline the task reads its actions straight
  from the ``ctrl`` slot; on the GPU pipeline they go to the device and the outputs come
  back, once per step each.
* ``DeviceIO``: the host's CUDA arena (``data_plane="cuda"``, GPU pipeline): the regions
  are torch CUDA tensors; the task reads its actions from the ``ctrl`` region, ordered
  after the host's writes (``ctrl_ready``), and its outputs are copied into their regions
  on torch's stream, waited for before the reply. No host copy on the step path.

Imported by the engine once the user's task is built (torch after isaacgym).
"""

import numpy as np
import torch

ACTIONS = "ctrl"


class HostIO:
    def __init__(self, slots, device):
        self.device = torch.device(device)
        self.arrays = {name: array for name, array in slots.items()
                       if isinstance(array, np.ndarray)}
        self.tensors = {name: torch.from_numpy(array) for name, array in self.arrays.items()}

    def begin(self):
        """The host wrote before it sent the request: nothing to order."""

    def actions(self):
        return self.tensors[ACTIONS].to(self.device)  # no copy on the CPU pipeline

    def read(self, name):
        return self.tensors[name].to(self.device)

    def end_flags(self, resets, time_outs):
        """``truncated`` (ended by a time-out) and ``terminated`` (ended otherwise) from the
        task's reset flags, by numpy straight into their slots."""
        resets = _numpy(resets).reshape(-1)
        truncated = self.arrays["truncated"]
        if time_outs is None:
            truncated.fill(False)
        else:
            np.logical_and(resets, _numpy(time_outs).reshape(-1), out=truncated)
        np.logical_xor(resets, truncated, out=self.arrays["terminated"])

    def publish(self, values):
        """Copy the outputs into shared memory by numpy: one thread, where torch's copies of
        the larger outputs would wake its thread pool (the task's, every core) each time."""
        for name, value in values.items():
            target = self.arrays[name]
            if value is None:
                target.fill(0)
                continue
            np.copyto(target, np.reshape(_numpy(value), target.shape), casting="unsafe")

    def publish_row(self, name, value):
        """Copy ``value`` into the first row of slot ``name`` (before ``publish``)."""
        self.arrays[name][0] = _numpy(value)

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

    def end_flags(self, resets, time_outs):
        """``truncated`` and ``terminated`` (as ``HostIO``'s) by torch, into their regions."""
        resets = torch.as_tensor(resets).reshape(-1)
        truncated = self.tensors["truncated"]
        if time_outs is None:
            truncated.zero_()
        else:
            torch.logical_and(resets, torch.as_tensor(time_outs).reshape(-1), out=truncated)
        torch.logical_xor(resets, truncated, out=self.tensors["terminated"])

    def publish(self, values):
        """Copy the outputs into their regions on torch's stream and wait for the copies: the
        reply goes once the state is in the arena. One copy kernel per output, where
        ``DeviceMapping.publish`` would export each by DLPack and copy it on a stream of its
        own."""
        for name, value in values.items():
            target = self.tensors[name]
            if value is None:
                target.zero_()
            else:  # copy_ converts the dtype and device in the same copy
                target.copy_(torch.as_tensor(value).reshape(target.shape))
        torch.cuda.current_stream(self.device).synchronize()

    def publish_row(self, name, value):
        """Copy ``value`` into the first row of region ``name``, ordered before the wait
        that ends ``publish``."""
        self.tensors[name][0].copy_(value)

    def close(self):
        self.mapping.close()


def _numpy(value):
    """A task's output as numpy: a copy off the device on the GPU pipeline, else a view."""
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value
