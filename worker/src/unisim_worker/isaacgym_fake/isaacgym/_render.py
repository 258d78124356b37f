"""Camera sensors and the viewer, rendered by MuJoCo (``mujoco.Renderer``, EGL headless).

Images follow ``get_camera_image``'s layout in the SDK (IsaacGymEnvs/legged_gym read
IMAGE_COLOR as ``(height, width * 4)`` uint8 RGBA and IMAGE_DEPTH as ``(height, width)``
float32 with negative distances, -inf where nothing is hit). A camera shows the scene as
of the last ``step_graphics`` (which shows the state as of the last ``fetch_results``),
rendered by the last ``render_all_camera_sensors``.
"""

import math

import mujoco
import numpy as np


class Camera:
    def __init__(self, env, properties):
        self.env = env
        self.width = int(properties.width)
        self.height = int(properties.height)
        self.hfov = float(properties.horizontal_fov)
        self.near = float(properties.near_plane)
        self.far = float(properties.far_plane)
        self.eye = np.array([1.0, 1.0, 1.0])
        self.target = np.zeros(3)
        self.color = np.zeros((self.height, self.width * 4), dtype=np.uint8)
        self.depth = np.full((self.height, self.width), -np.inf, dtype=np.float32)
        self.renderer = None
        self.scratch = None
        self.look = None  # the env's look when the renderer was made (``EnvSim.look``)

    def render(self):
        """Render the env (its graphics state) from this camera into its images."""
        if not self.env.actors:
            return
        model = self.env.physics()[0]
        look = self.env.look()
        if self.renderer is None or look != self.look:  # a renderer made for another look
            self.close()
            self.look = look
            model.vis.global_.offwidth = max(model.vis.global_.offwidth, self.width)
            model.vis.global_.offheight = max(model.vis.global_.offheight, self.height)
            self.renderer = mujoco.Renderer(model, self.height, self.width)
            self.scratch = mujoco.MjData(model)
        aspect = self.width / float(self.height)
        model.vis.global_.fovy = math.degrees(
            2 * math.atan(math.tan(math.radians(self.hfov) / 2) / aspect))
        model.vis.map.znear = self.near / max(model.stat.extent, 1e-9)
        data = self.scratch
        data.qpos[:] = self.env.graphics_qpos
        mujoco.mj_kinematics(model, data)
        mujoco.mj_camlight(model, data)
        camera = mujoco.MjvCamera()
        camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        forward = self.target - self.eye
        distance = float(np.linalg.norm(forward)) or 1e-6
        forward = forward / distance
        camera.lookat[:] = self.target
        camera.distance = distance
        camera.azimuth = math.degrees(math.atan2(forward[1], forward[0]))
        camera.elevation = math.degrees(math.asin(max(-1.0, min(1.0, forward[2]))))
        for depth in (False, True):
            if depth:
                self.renderer.enable_depth_rendering()
            else:
                self.renderer.disable_depth_rendering()
            self.renderer.update_scene(data, camera)
            image = self.renderer.render()
            if depth:
                far = image >= min(self.far, model.stat.extent * model.vis.map.zfar) * 0.999
                self.depth[...] = np.where(far, -np.inf, -image).astype(np.float32)
            else:
                rgba = np.concatenate([image, np.full((*image.shape[:2], 1), 255, np.uint8)],
                                      axis=2)
                self.color[...] = rgba.reshape(self.height, self.width * 4)

    def close(self):
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None


class ViewerState:
    """A headless viewer: it counts frames and closes after ``closes_after`` draws (the
    fake's stand-in for a user closing the window; None: never)."""

    def __init__(self, sim, closes_after):
        self.sim = sim
        self.frames = 0
        self.closes_after = closes_after
        self.destroyed = False
        self.lines = 0  # debug lines drawn since the last clear_lines
        self.eye = np.array([1.0, 1.0, 1.0])
        self.target = np.zeros(3)

    def closed(self):
        return self.closes_after is not None and self.frames >= self.closes_after
