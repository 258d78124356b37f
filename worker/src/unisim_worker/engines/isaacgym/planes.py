"""Where the IsaacGym engine's slots live, chosen once in ``attach`` (the MJX engine's split).

* ``HostSlots``: host shared memory (``data_plane="shm"``, either pipeline). ctrl goes to
  the sim's device, the state comes back to the host every step.
* ``DeviceSlots``: the host's CUDA arena (``data_plane="cuda"``, GPU pipeline only). The
  regions are torch CUDA tensors over the arena (``__cuda_array_interface__``, zero-copy);
  every request first makes torch's current stream wait on the host's ``ctrl_ready``; the
  state goes out by ``DeviceMapping.publish`` (device-to-device copies, and a wait for
  them before the reply). No host copy on the step path.

Imported by the engine after ``sim`` (torch only after isaacgym).
"""

from typing import Any, Dict

import numpy as np
import torch

STEP_INPUT = "ctrl"


class HostSlots:
    """Slots in host shared memory (numpy arrays)."""

    def __init__(self, slots: Dict[str, Any], device: str) -> None:
        self.slots = slots
        self.device = device

    def begin(self) -> None:
        """The host wrote before it sent the request: nothing to order."""

    def ctrl(self) -> torch.Tensor:
        ctrl = self.slots[STEP_INPUT]
        if not np.isfinite(ctrl).all():
            raise ValueError("ctrl contains NaN or infinite values; nothing was stepped")
        return torch.as_tensor(ctrl, dtype=torch.float64, device=self.device)

    def read(self, name: str, rows: np.ndarray) -> Any:
        return self.slots[name][rows]

    def publish(self, tensors: Dict[str, torch.Tensor]) -> None:
        for name, tensor in tensors.items():
            self.slots[name][...] = tensor.cpu().numpy()

    def close(self) -> None:
        """Nothing to release: the host owns the shared memory."""


class DeviceSlots:
    """Slots in the host's CUDA arena on the sim's GPU (``cuda_ipc.DeviceRegion``s)."""

    def __init__(self, slots: Dict[str, Any], device: str) -> None:
        from unisim_protocol.cuda_driver import driver

        self.device = torch.device(device)
        torch.cuda.set_device(self.device)  # torch's export to the mapping's stream uses it
        regions = {name: r for name, r in slots.items() if not isinstance(r, np.ndarray)}
        self.mapping = regions[STEP_INPUT].owner
        self.tensors = {name: torch.as_tensor(region, device=self.device)
                        for name, region in regions.items()}
        self.driver = driver()

    def begin(self) -> None:
        """Order this request's GPU work after the host's writes and its reads of the last
        state (its ``ctrl_ready``). The staging tensors are free again: the last publish
        waited for its copies."""
        stream = torch.cuda.current_stream(self.device).cuda_stream
        self.driver.wait(stream, self.mapping.ctrl_ready)

    def ctrl(self) -> torch.Tensor:
        """Checking for NaN would cost a host copy per step: non-finite controls become 0
        (as with MJX on this plane)."""
        return torch.nan_to_num(self.tensors[STEP_INPUT], nan=0.0, posinf=0.0, neginf=0.0)

    def read(self, name: str, rows: np.ndarray) -> torch.Tensor:
        return self.tensors[name][torch.as_tensor(rows, dtype=torch.long, device=self.device)]

    def publish(self, tensors: Dict[str, torch.Tensor]) -> None:
        self.mapping.publish(tensors)

    def close(self) -> None:
        self.mapping.close()
