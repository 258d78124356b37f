"""Ranges of a render pool's domain randomisation; the workers apply them."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

RANGES = ("rgb", "texture_rgb", "diffuse", "ambient", "specular")


@dataclass(frozen=True)
class Randomizer:
    """What ``RenderPool.render(randomize=True)`` changes, and by how much.

    Each randomised image starts from the nominal model and draws new values:

    * ``rgb``: the RGB of every geom and material, uniform in ``[low, high]`` per channel
      (alpha kept). Default ``(0, 1)``. For every range, ``(x, x)`` leaves that part alone.
    * ``texture_rgb``: every RGB texture recoloured between two random colours, uniform in
      ``[low, high]`` per channel, keeping its pattern (texel brightness). Default ``(0, 1)``.
    * ``light_pos``: every light moved by up to this many metres along each axis (0.5).
    * ``diffuse``, ``ambient``, ``specular``: every light's grey level, uniform in these
      ranges (``(0.3, 1.0)``, ``(0.0, 0.3)``, ``(0.0, 0.5)``).
    * ``camera_pos``: every model camera (and the free camera's look-at point) moved by up
      to this many metres along each axis (0.05).
    * ``camera_angle``: every model camera turned by up to this many degrees about a
      random axis; the free camera's azimuth and elevation by up to this much (5.0).

    Image ``r`` of the ``c``-th randomised call draws from a generator seeded with
    ``(seed, c, r)``, so a pool made with the same seed renders the same images, however
    many workers it has; each part above has its own stream.
    """

    seed: int = 0
    rgb: tuple[float, float] = (0.0, 1.0)
    texture_rgb: tuple[float, float] = (0.0, 1.0)
    light_pos: float = 0.5
    diffuse: tuple[float, float] = (0.3, 1.0)
    ambient: tuple[float, float] = (0.0, 0.3)
    specular: tuple[float, float] = (0.0, 0.5)
    camera_pos: float = 0.05
    camera_angle: float = 5.0

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        for name in RANGES:
            low, high = getattr(self, name)
            if not 0.0 <= low <= high <= 1.0:
                raise ValueError(f"{name} must be a range (low, high) with 0 <= low <= high "
                                 f"<= 1, got {getattr(self, name)!r}")
        for name in ("light_pos", "camera_pos", "camera_angle"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if self.camera_angle > 180.0:
            raise ValueError(f"camera_angle is in degrees, at most 180, got {self.camera_angle}")

    def to_wire(self) -> dict[str, Any]:
        """The ranges as the workers receive them in INIT."""
        wire = asdict(self)
        for name in RANGES:
            wire[name] = [float(v) for v in wire[name]]
        return wire
