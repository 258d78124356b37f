"""The CUDA data plane: the engine's slots in one device arena that the worker maps by CUDA IPC.

The host allocates the arena once with ``cuMemAlloc`` (plain device memory, never managed
memory), exports it and an interprocess event as raw 64-byte handles, and sends them in
ATTACH as bytes. A step is then ordered on the GPU: the host records ``ctrl_ready`` on
torch's current stream, the worker's stream waits on it, the worker steps, copies its state
into the arena and replies once the copies are done, so the host's next kernels find the
state there. No host copy, and the host never waits on the CPU.

The driver binding and the arena's regions (``protocol/cuda_driver.py``,
``protocol/cuda_arena.py``) are shared with the worker, which may run another framework and
Python 3.8. ``reset_mask`` stays in host shared memory: the host
writes it with numpy and the worker reads it on the CPU.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from unisim_protocol import arena as layout
from unisim_protocol import cuda_arena, cuda_driver, schemas

from .arrays import import_torch
from .errors import SetupError, StateError
from .layout import RESET_MASK, Layout
from .slots import Arena, SlotSpec, span

Driver = Any  # cuda_driver.Driver: Python 3.8 shared code, not type-checked here


def load_driver(device: int) -> Driver:
    """The CUDA driver, checked to have GPU ``device``; ``SetupError`` saying why not."""
    hint = "run on a machine with an NVIDIA GPU and driver, or use data_plane='shm'"
    try:
        drv = cuda_driver.driver()
        count = drv.device_count()
    except cuda_driver.CudaError as exc:
        raise SetupError(f"data_plane='cuda' needs a CUDA GPU: {exc}", hint=hint) from None
    if not 0 <= device < count:
        raise SetupError(f"data_plane='cuda' was asked for GPU {device}, but this process "
                         f"sees {count} GPU(s)", hint=f"pass device= in 0..{count - 1}")
    return drv


class _Memory:
    """One ``cuMemAlloc`` block, freed once nothing refers to it any more."""

    def __init__(self, drv: Driver, ordinal: int, size: int) -> None:
        self.pointer: int = drv.mem_alloc(size)
        drv.memset(self.pointer, 0, size)
        finalizer = weakref.finalize(self, _free, drv, ordinal, self.pointer)
        finalizer.atexit = False  # the driver frees everything at exit, torch's context first


def _free(drv: Driver, ordinal: int, pointer: int) -> None:
    try:
        drv.retain_context(ordinal)  # the finaliser may run on any thread
        drv.mem_free(pointer)
        drv.release_context(ordinal)  # the retain just above
        drv.release_context(ordinal)  # the arena's
    except cuda_driver.CudaError:
        pass  # a context torn down already took the memory with it


class DeviceArena:
    """The device-resident slots of one backend, and the two IPC events that order a step.

    ``regions`` are ``DeviceRegion``s over the arena; each holds the memory, and every torch
    tensor made from a region holds that region, so the memory outlives ``close()`` for as
    long as a tensor over it exists: reading a tensor after close is safe, never a fault.
    """

    def __init__(self, specs: Iterable[SlotSpec], rows: int, ordinal: int) -> None:
        drv = load_driver(ordinal)
        self._driver = drv
        self.specs = list(specs)
        self.rows = rows
        self.ordinal = ordinal
        self.uuid: bytes = drv.device_uuid(ordinal)
        self.offsets, self.size = layout.offsets(self.specs, rows, align=cuda_driver.ALIGN)
        drv.retain_context(ordinal)  # released by the memory's finaliser
        try:
            memory = _Memory(drv, ordinal, self.size)
        except BaseException:
            drv.release_context(ordinal)
            raise
        self._events: list[int] = []
        self.ctrl_ready = self._event()
        self.regions = {
            spec.name: cuda_arena.DeviceRegion(spec.name, memory.pointer + self.offsets[spec.name],
                                             spec.dtype, (rows, *spec.shape), ordinal, memory)
            for spec in self.specs
        }
        self._declaration = {
            "device_uuid": self.uuid,
            "memory": drv.export_memory(memory.pointer),
            "size": self.size,
            "events": {"ctrl_ready": drv.export_event(self.ctrl_ready)},
            "slots": [{"name": s.name, "dtype": s.dtype, "shape": [rows, *s.shape],
                       "offset": self.offsets[s.name]} for s in self.specs],
        }

    def _event(self) -> int:
        event: int = self._driver.create_ipc_event()
        self._events.append(event)
        return event

    def block(self, names: tuple[str, ...]) -> Any:
        """The adjacent slots ``names`` as one uint8 region over their bytes (``span``)."""
        if not self.regions:
            raise StateError("the device arena is closed")
        start, stop = span(self.specs, self.offsets, self.rows, names)
        memory = next(iter(self.regions.values())).owner  # every region holds the memory
        return cuda_arena.DeviceRegion("+".join(names), memory.pointer + start, "|u1",
                                       (stop - start,), self.ordinal, memory)

    def declaration(self) -> dict[str, Any]:
        """What the worker needs to open the arena (the ``cuda`` entry of ATTACH)."""
        return self._declaration

    def record_inputs(self, stream: int) -> None:
        self._driver.record(self.ctrl_ready, stream)

    def close(self) -> None:
        """Destroy the events and drop the arena's hold on the memory; safe to call twice."""
        events, self._events = self._events, []
        for event in events:
            self._driver.destroy_event(event)  # deferred by the driver while still pending
        self.regions = {}


class CudaPlane:
    """Engine slots in a ``DeviceArena`` as torch CUDA tensors; ``reset_mask`` in shared memory."""

    name = "cuda"

    def __init__(self, device: int | None) -> None:
        if device is None:
            device = 0
        if isinstance(device, bool) or not isinstance(device, int) or device < 0:
            raise ValueError(f"device must be a GPU ordinal (int >= 0), got {device!r}")
        self.device = device
        self.uuid: bytes = load_driver(device).device_uuid(device)
        self._torch = import_torch("data_plane='cuda'")
        if not self._torch.cuda.is_available():
            raise SetupError("data_plane='cuda' needs torch with CUDA; this torch "
                             f"({self._torch.__version__}) sees no GPU",
                             hint="install a CUDA build of torch, or use data_plane='shm'")
        self._host: Arena | None = None
        self._arena: DeviceArena | None = None
        self._views: dict[str, Any] = {}

    one_device = True

    def check_workers(self, workers: int | None) -> None:
        if workers not in (None, 1):
            raise ValueError(f"data_plane='cuda' steps all envs in one worker (its state is "
                             f"ordered by one event), got workers={workers!r}")

    def init_fields(self) -> dict[str, Any]:
        return {"data_plane": self.name, "device": {"ordinal": self.device, "uuid": self.uuid}}

    def allocate(self, layout: Layout, rows: int, lines: int) -> Arena:
        host = [s for s in layout.slots if s.name == RESET_MASK.name]
        self._host = Arena(host, rows, lines=lines)
        self._arena = DeviceArena([s for s in layout.slots if s not in host], rows, self.device)
        torch = self._torch
        target = torch.device("cuda", self.device)
        self._views = {name: torch.as_tensor(region, device=target)
                       for name, region in self._arena.regions.items()}
        self._views.update(self._host.views)
        return self._host

    def attach_payload(self, arena: Arena, rows: range, line: int) -> dict[str, Any]:
        request: dict[str, Any] = schemas.attach_request(arena.declaration(rows, line),
                                                         self._device().declaration())
        return request

    @property
    def views(self) -> dict[str, Any]:
        return self._views

    def tensors(self) -> dict[str, Any]:
        torch = self._torch
        return {name: torch.from_numpy(view) if isinstance(view, np.ndarray) else view
                for name, view in self._views.items()}

    def block(self, names: tuple[str, ...]) -> Any:
        return self._torch.as_tensor(self._device().block(names),
                                     device=self._torch.device("cuda", self.device))

    def write(self, name: str, value: Any, rows: Any = None) -> None:
        target = self._views[name]
        torch = self._torch
        if not isinstance(value, torch.Tensor):  # a fresh, writable host array for torch
            value = torch.from_numpy(np.array(value))
        source = value.to(device=target.device, dtype=target.dtype)
        try:
            if rows is None:
                target.copy_(source)
            else:
                target[torch.as_tensor(rows, device=target.device)] = source
        except RuntimeError as exc:
            raise ValueError(f"{name} must broadcast to shape {tuple(target.shape)}, "
                             f"got {tuple(source.shape)}: {exc}") from None

    def _stream(self) -> int:
        stream: int = self._torch.cuda.current_stream(self.device).cuda_stream
        return stream

    def _device(self) -> DeviceArena:
        if self._arena is None:
            raise StateError("the CUDA plane has no device arena: allocate() comes first")
        return self._arena

    def ordering(self) -> tuple[Callable[[], None]]:
        return (self.inputs_written,)

    def inputs_written(self) -> None:
        """The host's work so far (its writes, and its reads of the last outputs), before the
        worker's next request reads or overwrites the arena (``ctrl_ready``)."""
        self._device().record_inputs(self._stream())

    def close(self) -> None:
        """Destroy the events and drop this plane's views; the memory goes with the last
        tensor over it (the host arena is closed by the backend's ``Workers``, and its
        mapping, with the descriptor the mapping holds, goes once no view is left: a closed
        backend kept alive, say by a failed test's traceback, must not hold it)."""
        self._views = {}
        self._host = None
        if self._arena is not None:
            self._arena.close()
