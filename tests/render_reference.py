"""In-process ``mujoco.Renderer`` frames, runnable on any interpreter (3.8 included).

As a script: ``python render_reference.py MODEL QPOS.npy CAMERA WIDTH HEIGHT OUT.npz``
(CAMERA ``-`` for the free camera), to render a reference inside the Python 3.8 worker
interpreter. ``MUJOCO_GL`` must be set before mujoco is imported (``egl`` by default).
"""

import os
import sys

os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco
import numpy as np


def render(model, qpos_rows, camera, width, height, depth=False, mocap_pos=None):
    """RGB (and depth) frames of each qpos row (and mocap_pos row), drawn as a user would
    in-process."""
    if isinstance(model, str):
        model = (mujoco.MjModel.from_xml_string(model) if model.lstrip().startswith("<")
                 else mujoco.MjModel.from_xml_path(model))
    data = mujoco.MjData(model)
    rgbs, depths = [], []
    with mujoco.Renderer(model, height=height, width=width) as renderer:
        for i, qpos in enumerate(qpos_rows):
            data.qpos[:] = qpos
            if mocap_pos is not None:
                data.mocap_pos[:] = mocap_pos[i]
            mujoco.mj_forward(model, data)
            renderer.update_scene(data, camera=-1 if camera is None else camera)
            rgbs.append(renderer.render().copy())
            if depth:
                renderer.enable_depth_rendering()
                depths.append(renderer.render().copy())
                renderer.disable_depth_rendering()
    return np.array(rgbs), (np.array(depths) if depth else None)


if __name__ == "__main__":
    model_path, qpos_file, camera, width, height, out = sys.argv[1:]
    rgb, depth = render(model_path, np.load(qpos_file), None if camera == "-" else camera,
                        int(width), int(height), depth=True)
    np.savez(out, rgb=rgb, depth=depth, version=mujoco.__version__)
