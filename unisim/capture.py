"""Frames from a physics worker: an image slot the host grows on demand.

A frame never crosses the pipe. The host keeps a one-row arena (see ``slots.Arena``) big
enough for the largest frame asked for so far and unlinks its name at once: the CAPTURE
request declares it by the host's open descriptor (``Arena.declaration``), so whichever
worker of a backend holds the env maps it on first use. A larger frame replaces it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import StateError
from .slots import Arena, SlotSpec

MAX_SIDE = 8192  # pixels per side: the framebuffer limit of unisim_worker/engines/rendering.py


def check_image_size(width: int, height: int, max_pixels: int | None = None) -> None:
    """``ValueError`` naming the limit for a width or height the workers cannot render."""
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not 1 <= value <= MAX_SIDE:
            raise ValueError(f"image {name} must be an int in [1, {MAX_SIDE}], got {value!r}")
    if max_pixels is not None and width * height > max_pixels:
        raise ValueError(f"a {width}x{height} image has {width * height} pixels, over this "
                         f"pool's max_image_size of {max_pixels}; create the pool with a "
                         f"larger max_image_size or render smaller images")


class ImageSlot:
    """The capture arena: one row of ``capacity`` RGB pixels."""

    def __init__(self) -> None:
        self._arena: Arena | None = None

    def declare(self, width: int, height: int) -> dict[str, Any]:
        """The arena declaration for a ``width`` x ``height`` frame (grown if needed)."""
        check_image_size(width, height)
        needed = width * height * 3
        if self._arena is None or self._arena.specs[0].shape[0] < needed:
            self.close()
            self._arena = Arena([SlotSpec("rgb", "|u1", (needed,))], rows=1)
            self._arena.unlink()
        return self._arena.declaration()

    def frame(self, width: int, height: int) -> npt.NDArray[np.uint8]:
        """A copy of the frame the worker wrote (the slot is reused by the next capture)."""
        if self._arena is None:
            raise StateError("frame() before declare(): no image slot exists yet")
        flat = self._arena.views["rgb"][0, :width * height * 3]
        frame: npt.NDArray[np.uint8] = flat.reshape(height, width, 3).copy()
        return frame

    def close(self) -> None:
        if self._arena is not None:
            self._arena.close()
            self._arena = None
