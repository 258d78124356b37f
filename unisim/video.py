"""Videos of captured frames: MP4 (imageio-ffmpeg) or GIF (imageio's pillow plugin).

Install with ``pip install 'unisim-bridge[video]'``. Typical use, one frame per env step::

    with VideoRecorder("run/policy.mp4", sim, camera="track", fps=30) as video:
        for _ in range(200):
            sim.step(policy(sim.qpos))
            video.capture()
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import SetupError

FORMATS = (".mp4", ".gif")


class VideoRecorder:
    """Frames appended one by one (from ``sim.capture`` or given), written on ``close``."""

    def __init__(self, path: str | Path, sim: Any = None, *, env_id: int = 0,
                 camera: str | int | None = None, width: int = 320, height: int = 240,
                 fps: float = 30.0) -> None:
        self.path = Path(path)
        if self.path.suffix.lower() not in FORMATS:
            raise ValueError(f"video path must end in {' or '.join(FORMATS)}, got {self.path}")
        if fps <= 0:
            raise ValueError(f"fps must be positive, got {fps!r}")
        self.sim, self.env_id, self.camera = sim, env_id, camera
        self.width, self.height, self.fps = width, height, float(fps)
        self.frames: list[npt.NDArray[np.uint8]] = []
        self._imageio = _import_imageio(self.path.suffix.lower())

    def capture(self) -> npt.NDArray[np.uint8]:
        """Capture a frame from the recorder's backend and append it."""
        if self.sim is None:
            raise ValueError("this recorder has no backend to capture from; use add(frame)")
        frame: npt.NDArray[np.uint8] = self.sim.capture(
            self.env_id, camera=self.camera, width=self.width, height=self.height)
        self.add(frame)
        return frame

    def add(self, frame: npt.NDArray[np.uint8]) -> None:
        frame = np.asarray(frame)
        if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
            raise ValueError(f"a frame must be (H, W, 3) uint8, got {frame.shape} {frame.dtype}")
        if self.frames and frame.shape != self.frames[0].shape:
            raise ValueError(f"all frames must have one size: first {self.frames[0].shape}, "
                             f"now {frame.shape}")
        self.frames.append(frame)

    def close(self) -> Path:
        """Write the video (nothing if no frame was added) and return its path."""
        if not self.frames:
            return self.path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.suffix.lower() == ".gif":
            self._imageio.v3.imwrite(self.path, np.stack(self.frames), plugin="pillow",
                                     duration=1000.0 / self.fps, loop=0)
        else:
            height, width = self.frames[0].shape[:2]
            if width % 2 or height % 2:
                raise ValueError(f"MP4 (H.264, yuv420p) needs an even width and height, got "
                                 f"{width}x{height}; capture an even size or write a .gif")
            writer = self._imageio.v2.get_writer(self.path, format="FFMPEG", fps=self.fps,
                                                 codec="libx264", macro_block_size=2)
            try:
                for frame in self.frames:
                    writer.append_data(frame)
            finally:
                writer.close()
        self.frames = []
        return self.path

    def __enter__(self) -> VideoRecorder:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _import_imageio(suffix: str) -> Any:
    try:
        import imageio.v2
        import imageio.v3
        if suffix == ".mp4":
            import imageio_ffmpeg  # noqa: F401
    except ImportError as exc:
        raise SetupError(f"writing {suffix} videos needs imageio and imageio-ffmpeg",
                         hint="pip install 'unisim-bridge[video]'") from exc
    return imageio
