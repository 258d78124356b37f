"""Gym: forces and torques on rigid bodies from tensors, for the next simulate only.

The SDK's docstrings: ``apply_rigid_body_force_tensors`` "Applies forces and/or torques to
rigid bodies for the immediate timestep, in Newtons", at the centre of mass (the docs'
tensor API, "Body Forces"); ``apply_rigid_body_force_at_pos_tensors`` applies forces at
given positions (at the centre of mass where ``posTensor`` is None). Each tensor holds one
row of 3 per rigid body of the sim (the rigid body state tensor's order). ``space`` says
how the vectors (and positions) are expressed: ENV_SPACE (the env's frame, the default),
GLOBAL_SPACE (the world; positions less the env's origin) or LOCAL_SPACE (each body's own
frame; positions from its origin).

In MuJoCo they become ``xfrc_applied`` (a world-frame force at each body's centre of mass
and a torque), which MuJoCo applies at every substep of the next ``gym.simulate``;
``clear`` zeroes it after that simulate. Calls within one step add up, as forces added
to a PhysX body do.
"""

import numpy as np

from ._enums import CoordinateSpace


def clear(state):
    """After a simulate: the forces applied for it are spent."""
    for env in state.envs:
        if env.data is not None and getattr(env, "forces_applied", False):
            env.data.xfrc_applied[:] = 0.0
            env.forces_applied = False


def _rows(state, tensor, what):
    if tensor is None:
        return None
    return state.values(tensor, what, state.count("bodies"), 3)


def _apply(state, forces, torques, positions, space):
    """Rows of the sim's bodies (None: none of that kind) into each env's ``xfrc_applied``."""
    offsets = state.body_offsets()
    local = space == CoordinateSpace.LOCAL_SPACE
    for env in state.envs:
        env.physics()
    for actor in state.actors:
        env, data, bodies = actor.env, actor.data, actor.bodies
        rows = slice(offsets[actor.index], offsets[actor.index + 1])
        rotation = data.xmat[bodies].reshape(-1, 3, 3)
        force = None if forces is None else forces[rows]
        torque = np.zeros((len(bodies), 3)) if torques is None else torques[rows]
        if local:
            force = None if force is None else np.einsum("bij,bj->bi", rotation, force)
            torque = np.einsum("bij,bj->bi", rotation, torque)
        if force is not None and positions is not None:
            point = positions[rows]
            if local:
                point = data.xpos[bodies] + np.einsum("bij,bj->bi", rotation, point)
            elif space == CoordinateSpace.GLOBAL_SPACE:
                point = point - env.origin
            torque = torque + np.cross(point - data.xipos[bodies], force)
        if force is not None:
            data.xfrc_applied[bodies, 0:3] += force
        data.xfrc_applied[bodies, 3:6] += torque
        env.forces_applied = True


class BodyForcesMixin:
    def apply_rigid_body_force_tensors(self, sim, forceTensor=None, torqueTensor=None,
                                       space=CoordinateSpace.ENV_SPACE):
        state = sim._state
        forces = _rows(state, forceTensor, "apply_rigid_body_force_tensors' force tensor")
        torques = _rows(state, torqueTensor, "apply_rigid_body_force_tensors' torque tensor")
        if forces is not None or torques is not None:
            _apply(state, forces, torques, None, space)
        return True

    def apply_rigid_body_force_at_pos_tensors(self, sim, forceTensor, posTensor=None,
                                              space=CoordinateSpace.ENV_SPACE):
        state = sim._state
        forces = _rows(state, forceTensor, "apply_rigid_body_force_at_pos_tensors' force "
                       "tensor")
        positions = _rows(state, posTensor, "apply_rigid_body_force_at_pos_tensors' position "
                          "tensor")
        if forces is not None:
            _apply(state, forces, None, positions, space)
        return True
