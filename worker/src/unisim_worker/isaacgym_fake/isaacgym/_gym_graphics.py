"""Gym: camera sensors and the viewer. Both need a graphics device (create_sim's
``graphics_device`` >= 0); IsaacGymEnvs passes -1 for headless training without cameras.
Without one "no graphics context will be created" (the docs, "Creating a Simulation"):
``create_viewer`` returns None (the SDK's examples check ``if viewer is None``),
``create_camera_sensor`` -1, with the reason on stderr; the other graphics calls have
nothing to do."""

import os

import numpy as np

from ._enums import ImageType
from ._errors import FakeError, fake_limit, log_error
from ._render import Camera, ViewerState
from ._types import Transform, Vec3, Viewer

VIEWER_CLOSES_ENV = "ISAACGYM_FAKE_VIEWER_CLOSES_AFTER"


def _graphics(state, call):
    """Whether the sim has a graphics device; if not, ``call`` fails with the reason logged."""
    if state.graphics_device < 0:
        log_error("%s needs a graphics device, and this sim was created with "
                  "graphics_device=-1 (no rendering): pass a GPU index as create_sim's "
                  "graphics_device" % call)
    return state.graphics_device >= 0


class GraphicsMixin:
    # -- cameras ----------------------------------------------------------------------

    def create_camera_sensor(self, arg0, arg1):
        if not _graphics(arg0.sim, "create_camera_sensor"):
            return -1
        env = arg0._env
        camera = Camera(env, arg1)
        env.cameras.append(camera)
        env.sim.cameras.append(camera)
        return len(env.cameras) - 1

    def _camera(self, env, handle, call):
        cameras = env._env.cameras
        if not 0 <= int(handle) < len(cameras) or cameras[int(handle)] is None:
            raise FakeError("%s: camera handle %r is not a camera of env %d" % (
                call, handle, env._env.index))
        return cameras[int(handle)]

    def set_camera_location(self, arg0, arg1, arg2, arg3):
        camera = self._camera(arg1, arg0, "set_camera_location")
        camera.eye = np.array([arg2.x, arg2.y, arg2.z])  # env frame (docstring)
        camera.target = np.array([arg3.x, arg3.y, arg3.z])

    def set_camera_transform(self, arg0, arg1, arg2):
        camera = self._camera(arg1, arg0, "set_camera_transform")
        camera.eye = np.array([arg2.p.x, arg2.p.y, arg2.p.z])
        forward = arg2.r.rotate(Vec3(1.0, 0.0, 0.0))  # the SDK's cameras look along +x
        camera.target = camera.eye + np.array([forward.x, forward.y, forward.z])

    def get_camera_transform(self, arg0, arg1, arg2):
        camera = self._camera(arg1, arg2, "get_camera_transform")
        return Transform(Vec3(*camera.eye.tolist()))

    def step_graphics(self, arg0):
        if arg0._state.graphics_device < 0:
            return
        for env in arg0._state.envs:
            env.physics()
            env.graphics_qpos = env.fetched_qpos.copy()

    def render_all_camera_sensors(self, arg0):
        state = arg0._state
        for camera in state.cameras:
            camera.render()

    def get_camera_image(self, arg0, arg1, arg2, arg3):
        camera = self._camera(arg1, arg2, "get_camera_image")
        if arg3 == ImageType.IMAGE_COLOR:
            return camera.color.copy()
        if arg3 == ImageType.IMAGE_DEPTH:
            return camera.depth.copy()
        raise fake_limit("get_camera_image: the fake renders IMAGE_COLOR and IMAGE_DEPTH only, "
                         "got %r" % (arg3,))

    def start_access_image_tensors(self, arg0):
        """Nothing to guard: the fake's image tensors are not shared with a renderer."""

    def end_access_image_tensors(self, arg0):
        """Nothing to guard (see start_access_image_tensors)."""

    def destroy_camera_sensor(self, arg0, arg1, arg2):
        camera = self._camera(arg1, arg2, "destroy_camera_sensor")
        camera.close()
        arg1._env.cameras[int(arg2)] = None
        arg0._state.cameras.remove(camera)

    # -- viewer -----------------------------------------------------------------------

    def create_viewer(self, arg0, arg1):
        state = arg0._state
        if not _graphics(state, "create_viewer"):
            return None
        closes = os.environ.get(VIEWER_CLOSES_ENV)
        viewer = ViewerState(state, int(closes) if closes else None)
        state.viewers.append(viewer)
        return Viewer._make(_viewer=viewer)

    def _viewer(self, viewer, call):
        state = viewer._viewer
        if state.destroyed:
            raise FakeError("%s on a destroyed viewer" % call)
        return state

    def viewer_camera_look_at(self, arg0, arg1, arg2, arg3):
        viewer = self._viewer(arg0, "viewer_camera_look_at")
        viewer.eye = np.array([arg2.x, arg2.y, arg2.z])
        viewer.target = np.array([arg3.x, arg3.y, arg3.z])

    def draw_viewer(self, viewer, sim, render_collision=True):
        self._viewer(viewer, "draw_viewer").frames += 1

    def poll_viewer_events(self, arg0):
        self._viewer(arg0, "poll_viewer_events")

    def query_viewer_has_closed(self, arg0):
        return self._viewer(arg0, "query_viewer_has_closed").closed()

    def query_viewer_action_events(self, arg0):
        self._viewer(arg0, "query_viewer_action_events")
        return []

    def subscribe_viewer_keyboard_event(self, arg0, arg1, arg2):
        self._viewer(arg0, "subscribe_viewer_keyboard_event")

    def subscribe_viewer_mouse_event(self, arg0, arg1, arg2):
        self._viewer(arg0, "subscribe_viewer_mouse_event")

    def destroy_viewer(self, arg0):
        viewer = self._viewer(arg0, "destroy_viewer")
        viewer.destroyed = True
        viewer.sim.viewers.remove(viewer)

    def add_lines(self, arg0, arg1, arg2, arg3, arg4):
        """Debug lines in the viewer (its docstring: 6 floats per line, 3 per colour, at
        least ``arg2`` of each, as float arrays or arrays of ``Vec3.dtype``, its two
        overloads; ``arg1`` the env, None for world coordinates as IsaacGymEnvs' Ant
        passes)."""
        viewer, count, vertices, colors = arg0, arg2, arg3, arg4
        state = self._viewer(viewer, "add_lines")
        count = int(count)
        vertices, colors = _floats(vertices), _floats(colors)
        if vertices.size < 6 * count or colors.size < 3 * count:
            raise FakeError("add_lines: %d lines need at least %d vertex floats and %d colour "
                            "floats, got %d and %d" % (count, 6 * count, 3 * count,
                                                       vertices.size, colors.size))
        state.lines += count

    def clear_lines(self, arg0):
        self._viewer(arg0, "clear_lines").lines = 0


def _floats(values):
    """A flat float32 array of float values or of ``Vec3.dtype`` records."""
    values = np.ascontiguousarray(values)
    if values.dtype.names is not None:
        values = values.view(np.float32)
    return values.astype(np.float32).reshape(-1)
