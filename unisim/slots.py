"""Shared-memory arena: one segment per backend, holding every slot at an aligned offset.

The host creates the segment (mode 0600, name ``unisim-<pid>-<random>``), declares it to
the worker, and unlinks the name as soon as the worker has mapped it, so nothing named
outlives setup whatever kills whom. The host keeps the segment's descriptor, through
which other processes of this user can still map it (``declaration``'s ``path``).
``reap_orphans`` removes segments of dead owners left by a crash inside that short window.
"""

from __future__ import annotations

import mmap
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from unisim_protocol import arena, doorbell

SHM_DIR = Path(arena.SHM_DIR)
PREFIX = arena.PREFIX


@dataclass(frozen=True)
class SlotSpec:
    """A slot: ``num_envs`` rows of per-env shape ``shape``."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    def nbytes(self, rows: int) -> int:
        return rows * int(arena.row_bytes(self))


def span(specs: list[SlotSpec], offsets: dict[str, int], rows: int,
         names: tuple[str, ...]) -> tuple[int, int]:
    """The bytes ``(start, stop)`` that slots ``names`` cover, which must be adjacent and in
    this order in ``specs`` (alignment padding between them is covered too)."""
    order = [spec.name for spec in specs]
    first = order.index(names[0]) if names and names[0] in order else -1
    if first < 0 or tuple(order[first:first + len(names)]) != tuple(names):
        raise ValueError(f"slots {list(names)} are not adjacent in this order in the arena "
                         f"(its slots: {order})")
    last = specs[first + len(names) - 1]
    return offsets[names[0]], offsets[last.name] + last.nbytes(rows)


class Arena:
    """A mapped segment and the numpy views of its slots."""

    def __init__(self, specs: Iterable[SlotSpec], rows: int, lines: int = 0) -> None:
        """``lines`` extra 64-byte control lines (doorbells) precede the slots."""
        self.specs = list(specs)
        self.rows = rows
        self.lines = lines
        offsets, size = arena.offsets(self.specs, rows, start=lines * doorbell.LINE_BYTES)
        self.offsets: dict[str, int] = offsets
        self.size: int = size
        self.name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(12)}"
        path = SHM_DIR / self.name
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, self.size)
            self._mmap: mmap.mmap | None = mmap.mmap(fd, self.size)
        except BaseException:
            path.unlink(missing_ok=True)
            os.close(fd)
            raise
        self._fd: int | None = fd  # keeps the segment reachable once unlinked (declaration)
        self.linked = True
        # np.frombuffer keeps a buffer export alive (np.ndarray(buffer=) does not), so the
        # mapping cannot be unmapped under a view that is still held: no use-after-unmap.
        self.views = {
            spec.name: np.frombuffer(self._mmap, dtype=spec.dtype, offset=offsets[spec.name],
                                     count=rows * int(np.prod(spec.shape, dtype=np.int64)),
                                     ).reshape(rows, *spec.shape)
            for spec in self.specs
        }
        self.doorbells = [
            np.frombuffer(self._mmap, dtype="<u4", count=doorbell.WORDS,
                          offset=k * doorbell.LINE_BYTES) for k in range(lines)
        ]

    def block(self, names: tuple[str, ...]) -> npt.NDArray[np.uint8]:
        """The adjacent slots ``names`` as one uint8 view over their bytes (``span``)."""
        if self._mmap is None:
            raise ValueError(f"arena {self.name} is closed")
        start, stop = span(self.specs, self.offsets, self.rows, names)
        return np.frombuffer(self._mmap, dtype=np.uint8, offset=start, count=stop - start)

    def declaration(self, rows: range | None = None, line: int | None = None
                    ) -> dict[str, object]:
        """What a worker needs to map its ``rows`` of every slot, and its doorbell ``line``."""
        path = None
        if not self.linked:
            # Unlinked, the segment stays reachable through this process's descriptor:
            # another process of this user can map it (a restarted worker, a capture).
            if self._fd is None:
                raise ValueError(f"arena {self.name} is closed")
            path = f"/proc/{os.getpid()}/fd/{self._fd}"
        declared: dict[str, object] = arena.declaration(
            self.name, self.size, self.specs, self.offsets,
            range(self.rows) if rows is None else rows, line, path)
        return declared

    def unlink(self) -> None:
        """Remove the name; the mappings stay valid until unmapped."""
        if self.linked:
            (SHM_DIR / self.name).unlink(missing_ok=True)
            self.linked = False

    def close(self) -> None:
        """Unlink and unmap. Views still held elsewhere keep the mapping alive, so reading
        them after close is safe (their data is simply no longer updated)."""
        self.unlink()
        self.views = {}
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.doorbells = []
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                pass  # exported views remain; the kernel unmaps when the last one dies
            self._mmap = None


def reap_orphans() -> list[str]:
    """Unlink unisim segments whose owning process no longer exists; returns their names."""
    reaped = []
    for path in SHM_DIR.glob(f"{PREFIX}*"):
        pid_text = path.name[len(PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit() or _pid_alive(int(pid_text)):
            continue
        try:
            path.unlink()
            reaped.append(path.name)
        except (FileNotFoundError, PermissionError):
            pass
    return reaped


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
