"""Body states from MuJoCo's forward kinematics, for when PhysX has none to give.

PhysX has no forward-kinematics call: after the root and DOF states are set, the rigid
body states keep their old values until the next ``simulate`` (IsaacLab issue #240;
IsaacGymEnvs issue #179 on ``humanoid_amp``). So after INIT, and after a reset, the
engine computes the reset envs' body states itself, from the same MJCF, with MuJoCo
(``mj_kinematics``, ``mj_comPos``, ``mj_comVel``; once per distinct state), in IsaacGym's
layout: body origin position, quaternion xyzw, linear velocity of the centre of mass the
engine reports, angular velocity (world axes). MuJoCo is optional in the worker: without
it those rows are NaN until the next step, and the configuration report says so.
"""

import numpy as np

from .. import rendering

MISSING = ("MuJoCo is not installed in the worker's interpreter: body_states are NaN after "
           "INIT and after a reset until the next step (PhysX has no forward kinematics); "
           "pip install 'mujoco>=3.2' there to have them")


class Kinematics:
    """MuJoCo models of the variants, with IsaacGym's body order and centres of mass."""

    def __init__(self, paths, body_names, coms):
        """``coms[v]``: ``(nbody, 3)`` centres of mass of variant ``v``'s bodies, body frame."""
        mujoco = rendering.import_mujoco()
        self.mujoco = mujoco
        self.models = [mujoco.MjModel.from_xml_path(path) for path in paths]
        self.data = [mujoco.MjData(model) for model in self.models]
        self.ids = []
        for path, model in zip(paths, self.models):
            ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name) for name in body_names]
            missing = [name for name, i in zip(body_names, ids) if i < 0]
            if missing:
                raise ValueError("MuJoCo finds no bodies %s in %s" % (missing, path))
            self.ids.append(np.array(ids))
        self.coms = [np.asarray(com, dtype=np.float64) for com in coms]

    def body_states(self, variants, qpos, qvel):
        """``(n, nbody, 13)`` float32 body states (env frame) of n envs of the given variants."""
        mujoco = self.mujoco
        keys = np.hstack([np.asarray(variants, dtype=np.float64)[:, None], qpos, qvel])
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
        found = np.zeros((len(unique), len(self.ids[0]), 13), dtype=np.float32)
        for row, key in enumerate(unique):
            variant = int(key[0])
            model, data, ids = self.models[variant], self.data[variant], self.ids[variant]
            data.qpos[:] = key[1:1 + model.nq]
            data.qvel[:] = key[1 + model.nq:]
            mujoco.mj_kinematics(model, data)
            mujoco.mj_comPos(model, data)
            mujoco.mj_comVel(model, data)
            # cvel: [angular, linear] at the subtree's centre of mass, world axes
            omega = data.cvel[ids, 0:3]
            anchor = data.subtree_com[model.body_rootid[ids]]
            com = data.xpos[ids] + np.einsum("kij,kj->ki", data.xmat[ids].reshape(-1, 3, 3),
                                             self.coms[variant])
            states = found[row]
            states[:, 0:3] = data.xpos[ids]
            states[:, 3:7] = data.xquat[ids][:, [1, 2, 3, 0]]
            states[:, 7:10] = data.cvel[ids, 3:6] + np.cross(omega, com - anchor)
            states[:, 10:13] = omega
        return found[np.reshape(inverse, -1)]


def nan_body_states(count, nbody):
    """What the engine publishes where MuJoCo is missing: explicitly unknown."""
    return np.full((count, nbody, 13), np.nan, dtype=np.float32)
