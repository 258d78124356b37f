"""Data planes: where a backend's slots live, chosen once when the backend is built.

``HostPlane`` puts every slot in one shared-memory arena and hands out numpy views;
``cuda_ipc.CudaPlane`` puts the engine's slots in device memory shared by CUDA IPC and
hands out torch CUDA tensors. The backend talks to either through the same few calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from unisim_protocol import schemas

from .arrays import as_numpy, import_torch
from .layout import Layout
from .slots import Arena

PLANES = ("shm", "cuda")
Hooks = tuple[Callable[[], None], ...]


class DataPlane(Protocol):
    name: str
    one_device: bool  # the state sits on one GPU: one worker unless asked otherwise

    def check_workers(self, workers: int | None) -> None:
        """Refuse a ``workers=`` this plane cannot serve (``split.choose`` decides the rest)."""

    def init_fields(self) -> dict[str, Any]:
        """Entries this plane adds to the INIT payload (e.g. which GPU)."""

    def allocate(self, layout: Layout, rows: int, lines: int) -> Arena:
        """Create the slots for ``layout``; return the host arena (with ``lines`` doorbell
        lines), which the backend's ``Workers`` owns and closes."""

    def attach_payload(self, arena: Arena, rows: range, line: int) -> dict[str, Any]:
        """The ATTACH payload for the worker of ``rows``, ringing doorbell ``line``."""

    @property
    def views(self) -> dict[str, Any]:
        """Every slot by name: numpy arrays, or torch tensors for device slots."""

    def tensors(self) -> dict[str, Any]:
        """Every slot as a torch tensor over the same memory."""

    def block(self, names: tuple[str, ...]) -> Any:
        """The adjacent slots ``names`` as one torch uint8 tensor over their bytes."""

    def write(self, name: str, value: Any, rows: Any = None) -> None:
        """Copy ``value`` into slot ``name``, or into its ``rows``."""

    def ordering(self) -> Hooks:
        """What to call before a request whose worker reads what the host wrote (nothing, for
        host memory: the request orders it). Nothing is called after a reply: a worker
        replies once its writes are done, on a device plane too (its engines wait for their
        copies first)."""

    def close(self) -> None:
        """Release what the plane holds beyond the host arena (views stay safe to read)."""


def create(kind: str, device: int | None) -> DataPlane:
    """The plane called ``kind`` (``"shm"`` or ``"cuda"``) for GPU ``device``."""
    if kind == "shm":
        return HostPlane(device)
    if kind == "cuda":
        from .cuda_ipc import CudaPlane

        return CudaPlane(device)
    raise ValueError(f"data_plane must be one of {PLANES}, got {kind!r}")


class HostPlane:
    """All slots in host shared memory (``slots.Arena``); numpy views."""

    name = "shm"

    def __init__(self, device: int | None) -> None:
        if device is not None and (isinstance(device, bool) or not isinstance(device, int)
                                   or device < 0):
            raise ValueError(f"device must be a GPU ordinal (int >= 0) or None, got {device!r}")
        self.device = device
        self.one_device = device is not None
        self._arena: Arena | None = None

    def check_workers(self, workers: int | None) -> None:
        """Any number of workers can share a host arena."""

    def init_fields(self) -> dict[str, Any]:
        return {} if self.device is None else {"device": {"ordinal": self.device}}

    def allocate(self, layout: Layout, rows: int, lines: int) -> Arena:
        self._arena = Arena(layout.slots, rows, lines=lines)
        return self._arena

    def attach_payload(self, arena: Arena, rows: range, line: int) -> dict[str, Any]:
        request: dict[str, Any] = schemas.attach_request(arena.declaration(rows, line))
        return request

    @property
    def views(self) -> dict[str, Any]:
        return {} if self._arena is None else self._arena.views

    def tensors(self) -> dict[str, Any]:
        torch = import_torch("tensors()")
        return {name: torch.from_numpy(view) for name, view in self.views.items()}

    def block(self, names: tuple[str, ...]) -> Any:
        if self._arena is None:
            raise ValueError("the host plane has no arena: allocate() comes first")
        return import_torch("block()").from_numpy(self._arena.block(names))

    def write(self, name: str, value: Any, rows: Any = None) -> None:
        target = self.views[name]
        source = as_numpy(value)
        try:
            if rows is None:
                np.copyto(target, source, casting="same_kind")
            else:
                target[rows] = source
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{name} must broadcast to shape {target.shape} with a float dtype, "
                             f"got {np.shape(source)}: {exc}") from None

    def ordering(self) -> Hooks:
        return ()

    def close(self) -> None:
        """The host arena is all there is, and the backend's ``Workers`` closes it."""
