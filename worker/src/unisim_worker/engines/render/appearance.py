"""Domain randomisation of a render worker's model (Python 3.8+, MuJoCo 3.2 or 4).

The host sends the ranges (``unisim.Randomizer`` documents them and their defaults).
Each randomised row draws from ``numpy.random.default_rng([seed, call, row, part])``:
a row's look depends on the seed, the call and the row only, never on which worker drew
it, and each part (colours, textures, lights, camera) has its own stream, so turning one
off leaves the others' draws unchanged. ``restore`` puts the nominal model back.
"""

import numpy as np

MATERIALS, TEXTURES, LIGHTS, CAMERA = range(4)


class AppearanceDraws:
    def __init__(self, mujoco, model, config):
        self.mujoco = mujoco
        self.model = model
        self.config = config
        self.seed = int(config["seed"])
        fields = ["geom_rgba", "mat_rgba", "tex_data", "light_pos", "light_diffuse",
                  "light_ambient", "light_specular", "cam_pos", "cam_quat"]
        self.nominal = dict((name, getattr(model, name).copy()) for name in fields)
        self.textures_dirty = False

    def apply(self, call, row, free_camera):
        """Perturb the model for ``row`` of randomised call ``call``; perturbs the
        ``MjvCamera`` ``free_camera`` too, if given. True if textures changed."""
        self.restore()
        config, model = self.config, self.model
        streams = [np.random.default_rng([self.seed, call, row, part]) for part in range(4)]
        low, high = config["rgb"]
        if low < high:
            rng = streams[MATERIALS]
            model.geom_rgba[:, :3] = rng.uniform(low, high, (model.ngeom, 3))
            model.mat_rgba[:, :3] = rng.uniform(low, high, (model.nmat, 3))
        low, high = config["texture_rgb"]
        if low < high and model.ntex:
            self._recolour_textures(streams[TEXTURES], low, high)
        self._perturb_lights(streams[LIGHTS])
        self._perturb_cameras(streams[CAMERA], free_camera)
        return self.textures_dirty

    def restore(self):
        """Put back the nominal values; True if textures must be uploaded again."""
        for name, value in self.nominal.items():
            if name != "tex_data":
                getattr(self.model, name)[:] = value
        dirty, self.textures_dirty = self.textures_dirty, False
        if dirty:
            self.model.tex_data[:] = self.nominal["tex_data"]
        return dirty

    def _recolour_textures(self, rng, low, high):
        """Each texture keeps its pattern (texel brightness) between two random colours."""
        model = self.model
        for i in range(model.ntex):
            start = model.tex_adr[i]
            channels = model.tex_nchannel[i]
            size = model.tex_width[i] * model.tex_height[i] * channels
            texels = model.tex_data[start:start + size].reshape(-1, channels)
            colours = rng.uniform(low, high, (2, 3)) * 255.0
            if channels < 3:
                continue  # luminance textures carry no colour to change
            grey = texels[:, :3].mean(axis=1, keepdims=True) / 255.0
            texels[:, :3] = np.rint(grey * colours[0] + (1.0 - grey) * colours[1])
        self.textures_dirty = True

    def _perturb_lights(self, rng):
        config, model = self.config, self.model
        n = model.nlight
        model.light_pos[:] += rng.uniform(-1.0, 1.0, (n, 3)) * config["light_pos"]
        for name in ("light_diffuse", "light_ambient", "light_specular"):
            low, high = config[name[len("light_"):]]
            if low < high:
                getattr(model, name)[:] = rng.uniform(low, high, (n, 1))

    def _perturb_cameras(self, rng, free_camera):
        config, model = self.config, self.model
        offset = config["camera_pos"]
        angle = np.deg2rad(config["camera_angle"])
        model.cam_pos[:] += rng.uniform(-offset, offset, (model.ncam, 3))
        for i in range(model.ncam):
            model.cam_quat[i] = _rotate(self.mujoco, model.cam_quat[i], rng, angle)
        if free_camera is not None:
            free_camera.lookat[:] += rng.uniform(-offset, offset, 3)
            free_camera.azimuth += rng.uniform(-1.0, 1.0) * config["camera_angle"]
            free_camera.elevation += rng.uniform(-1.0, 1.0) * config["camera_angle"]


def _rotate(mujoco, quat, rng, max_angle):
    """``quat`` turned by a random angle up to ``max_angle`` about a random axis."""
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    turn = np.empty(4)
    mujoco.mju_axisAngle2Quat(turn, axis, rng.uniform(-max_angle, max_angle))
    result = np.empty(4)
    mujoco.mju_mulQuat(result, quat, turn)
    return result
