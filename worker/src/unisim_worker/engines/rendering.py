"""Offscreen MuJoCo rendering into shared-memory image slots (Python 3.8+, MuJoCo 3.2 or 4).

Shared by the physics engine's CAPTURE and the render engine's RENDER. Frames are drawn
with ``mujoco.Renderer`` exactly as a user would in-process (same scene options, same
model render settings), so a frame from a worker equals one from an in-process renderer
for the same state. The OpenGL backend comes from ``MUJOCO_GL``: unless the user chose one,
``egl`` where libEGL exists (llvmpipe on CPU, a GPU chosen by ``MUJOCO_EGL_DEVICE_ID``),
else ``osmesa`` where libOSMesa exists, else MuJoCo's default (physics only).
"""

import ctypes.util
import os

MAX_SIDE = 8192  # pixels; also the largest offscreen framebuffer the worker will allocate


def import_mujoco():
    """``mujoco``, with a headless GL backend unless the user chose one.

    A backend whose library is missing would make ``import mujoco`` itself fail, so one is
    chosen only where its library is found: physics must work on machines without GL.
    """
    if "MUJOCO_GL" not in os.environ:
        for backend, library in (("egl", "EGL"), ("osmesa", "OSMesa")):
            if ctypes.util.find_library(library):
                os.environ["MUJOCO_GL"] = backend
                break
    import mujoco

    return mujoco


def camera_id(mujoco, model, camera):
    """Model camera id of ``camera`` (a name, an id, or None for the free camera: -1)."""
    if camera is None:
        return -1
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, i) or "#%d" % i
             for i in range(model.ncam)]
    if isinstance(camera, str):
        found = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
        if found < 0:
            raise ValueError("the model has no camera %r; its cameras: %s (or None for the "
                             "free camera)" % (camera, ", ".join(names) or "none"))
        return found
    if not isinstance(camera, int) or isinstance(camera, bool) or not -1 <= camera < model.ncam:
        raise ValueError("camera must be a camera name, an id in [-1, %d) or None, got %r"
                         % (model.ncam, camera))
    return camera


def check_size(width, height):
    for name, value in (("width", width), ("height", height)):
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_SIDE:
            raise ValueError("image %s must be an int in [1, %d], got %r" % (name, MAX_SIDE, value))


def image_rows(rgb_slot, depth_slot, rows, width, height):
    """(n, H, W, 3) and (n, H, W) views of images ``rows`` of the image slots.

    A slot has room for ``len(slot)`` images of its per-row size; images of H x W are
    packed one after another from the slot's start, so that the first N of them form one
    contiguous (N, H, W, 3) array for the host, whatever the size.
    """
    start, stop = rows
    pixels = width * height
    if pixels * 3 > rgb_slot.shape[1]:
        raise ValueError("a %dx%d image needs %d bytes per row, the image slot holds %d"
                         % (width, height, pixels * 3, rgb_slot.shape[1]))
    if not 0 <= start <= stop <= rgb_slot.shape[0]:
        raise ValueError("image rows [%d, %d) outside the slot's %d rows"
                         % (start, stop, rgb_slot.shape[0]))
    rgb = rgb_slot.reshape(-1)[start * pixels * 3:stop * pixels * 3]
    rgb = rgb.reshape(stop - start, height, width, 3)
    depth = None
    if depth_slot is not None:
        depth = depth_slot.reshape(-1)[start * pixels:stop * pixels]
        depth = depth.reshape(stop - start, height, width)
    return rgb, depth


class FrameRenderer:
    """A ``mujoco.Renderer`` for the latest image size, re-created when the size changes."""

    def __init__(self, mujoco, model):
        self.mujoco = mujoco
        self.model = model
        self.renderer = None
        self.size = None
        self.depth_mode = False

    def prepare(self, width, height):
        """The renderer for ``width`` x ``height`` (made now if the size is new)."""
        check_size(width, height)
        if self.size != (width, height):
            self.close()
            visual = self.model.vis.global_
            # The framebuffer only bounds the size; the pixels drawn do not depend on it.
            visual.offwidth = max(visual.offwidth, width)
            visual.offheight = max(visual.offheight, height)
            self.renderer = self.mujoco.Renderer(self.model, height=height, width=width)
            self.size = (width, height)
            self.depth_mode = False
        return self.renderer

    def render(self, data, camera, rgb, depth=None):
        """Draw ``data`` from camera id ``camera`` into ``rgb`` (H, W, 3) uint8 and, if given,
        ``depth`` (H, W) float32 in metres from the camera plane."""
        height, width = rgb.shape[:2]
        renderer = self.prepare(width, height)
        renderer.update_scene(data, camera=camera)
        self._set_depth(renderer, False)
        renderer.render(out=rgb)
        if depth is not None:
            self._set_depth(renderer, True)
            renderer.render(out=depth)

    def upload_textures(self):
        """Send the model's (changed) textures to the GL context, if one exists yet."""
        if self.renderer is None:
            return  # a renderer made later uploads the model's textures as they are then
        # mujoco.Renderer keeps its GL and MjrContext private; both versions name them so.
        if self.renderer._gl_context is not None:
            self.renderer._gl_context.make_current()
        for texture in range(self.model.ntex):
            self.mujoco.mjr_uploadTexture(self.model, self.renderer._mjr_context, texture)

    def _set_depth(self, renderer, on):
        if on != self.depth_mode:
            if on:
                renderer.enable_depth_rendering()
            else:
                renderer.disable_depth_rendering()
            self.depth_mode = on

    def close(self):
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None
            self.size = None
