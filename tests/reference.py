"""In-process MuJoCo reference trajectories, runnable on any interpreter (3.8 included).

As a script: ``python reference.py MODEL KEYFRAME NUM_ENVS SUBSTEPS CTRL.npy OUT.npz``
(used to compute a reference inside the Python 3.8 worker interpreter).
"""

import sys

import mujoco
import numpy as np


def rollout(model_path, keyframe, num_envs, substeps, controls):
    """qpos/qvel after each step of a loop over one MjData per env.

    ``controls`` is (steps, num_envs, nu); returns arrays of (steps + 1, num_envs, n).
    """
    model = mujoco.MjModel.from_xml_path(model_path)
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, keyframe) if keyframe else -1
    datas = [mujoco.MjData(model) for _ in range(num_envs)]
    for data in datas:
        if key >= 0:
            mujoco.mj_resetDataKeyframe(model, data, key)
        mujoco.mj_forward(model, data)
    qpos = [np.array([d.qpos for d in datas])]
    qvel = [np.array([d.qvel for d in datas])]
    for ctrl in controls:
        for data, row in zip(datas, ctrl):  # noqa: B905 (runs on Python 3.8)
            data.ctrl[:] = row
            mujoco.mj_step(model, data, substeps)
        qpos.append(np.array([d.qpos for d in datas]))
        qvel.append(np.array([d.qvel for d in datas]))
    return np.array(qpos), np.array(qvel)


if __name__ == "__main__":
    model_path, keyframe, num_envs, substeps, ctrl_file, out = sys.argv[1:]
    qpos, qvel = rollout(model_path, keyframe, int(num_envs), int(substeps), np.load(ctrl_file))
    np.savez(out, qpos=qpos, qvel=qvel, version=mujoco.__version__)
