"""Gym: the Jacobian and mass-matrix tensors of the actors of one name.

The IsaacGym docs (programming/tensors.html, "Jacobians and Mass Matrices"): the tensors
hold the matrices of every actor of that name, one per env; the mass matrix has shape
``(num_envs, num_dofs, num_dofs)``; the Jacobian ``(num_envs, num_links, 6, num_dofs + 6)``
for a free base, whose six extra columns come first and are the root's linear and angular
velocity, and ``(num_envs, num_links - 1, 6, num_dofs)`` for a fixed base (the root link
left out). Each link's six rows are the linear velocity of its origin and its angular
velocity, in the world frame (the linear rows at the link origin as IsaacLab documents
for the same PhysX Jacobian, ``Articulation.root_physx_view.get_jacobians``). Both
change on ``refresh_jacobian_tensors`` / ``refresh_mass_matrix_tensors``, at the pose the
actors have then, a DOF or root state set since the last simulate included
(FrankaCubeStack sets its reset pose, refreshes them and inverts ``J M^-1 J^T``: at the
last simulate's pose, all DOFs 0, its Franka is singular), and may be acquired before
``prepare_sim`` (FrankaCubeStack does).

From MuJoCo: ``mj_jacBody`` (the body origin's Jacobian) and ``mj_fullM``, on the DOFs of
the actor, computed on a scratch MjData of the env (its kinematics from the current
``qpos``; the env's own data, which the rigid body states read, keeps the last simulate's);
a free root's columns turn from MuJoCo's body-frame angular velocity to the world frame's.
The mass matrix of a free-base actor is its DOF block (the docs' shape).
"""

import weakref

import mujoco
import numpy as np
import torch

from ._errors import log_error
from ._gym_tensors import _tensor_of


def _actors(state, name):
    """The first actor named ``name`` in each env that has one."""
    found = []
    for env in state.envs:
        if name in env.names:
            env.physics()
            found.append(env.actors[env.names.index(name)])
    return found


_SCRATCH = weakref.WeakKeyDictionary()  # MjModel: an MjData for the matrices


def posed(actor):
    """A scratch MjData of ``actor``'s env at its current ``qpos``: kinematics, the
    bodies' inertias and the mass matrix computed."""
    model = actor.model
    scratch = _SCRATCH.get(model)
    if scratch is None:
        scratch = _SCRATCH[model] = mujoco.MjData(model)
    scratch.qpos[:] = actor.data.qpos
    mujoco.mj_kinematics(model, scratch)
    mujoco.mj_comPos(model, scratch)
    mujoco.mj_crb(model, scratch)
    return scratch


def jacobian(actor, data):
    """(links, 6, columns) of one actor at the pose of ``data``, as the docs lay it out."""
    model = actor.model
    columns = list(range(actor.root_v, actor.root_v + 6)) if actor.free else []
    columns += list(actor.vadr)
    links = actor.bodies if actor.free else actor.bodies[1:]
    result = np.zeros((len(links), 6, len(columns)))
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    for k, body in enumerate(links):
        mujoco.mj_jacBody(model, data, jacp, jacr, body)
        result[k, 0:3] = jacp[:, columns]
        result[k, 3:6] = jacr[:, columns]
    if actor.free:  # MuJoCo's free joint turns with the body's frame; the docs' with the world
        rotation = data.xmat[actor.bodies[0]].reshape(3, 3)
        result[:, :, 3:6] = result[:, :, 3:6] @ rotation.T
    return result


def mass_matrix(actor, data):
    model = actor.model
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, full, data.qM)
    return full[np.ix_(actor.vadr, actor.vadr)]


class _Matrices:
    """The tensors of one kind acquired so far, by actor name."""

    def __init__(self, compute):
        self.compute = compute
        self.tensors = {}

    def acquire(self, state, name, call):
        actors = _actors(state, name)
        if not actors:
            log_error("%s: no env has an actor named %r" % (call, name))
            return None
        if name not in self.tensors:
            shape = (len(actors), *self.compute(actors[0], posed(actors[0])).shape)
            self.tensors[name] = torch.zeros(shape, dtype=torch.float32, device=state.device)
            self.refresh(state, name)
        return _tensor_of(self.tensors[name])

    def refresh(self, state, name):
        values = np.stack([self.compute(actor, posed(actor))
                           for actor in _actors(state, name)])
        self.tensors[name].copy_(torch.from_numpy(values.astype(np.float32)))

    def refresh_all(self, state):
        for name in self.tensors:
            self.refresh(state, name)


_ACQUIRED = weakref.WeakKeyDictionary()  # SimState: {kind: _Matrices}


def _matrices(state, kind):
    """``state``'s acquired matrices of ``kind`` ("jacobian", "mass_matrix")."""
    store = _ACQUIRED.setdefault(state, {})
    if kind not in store:
        store[kind] = _Matrices(jacobian if kind == "jacobian" else mass_matrix)
    return store[kind]


class JacobianMixin:
    def acquire_jacobian_tensor(self, arg0, arg1):
        return _matrices(arg0._state, "jacobian").acquire(arg0._state, arg1,
                                                          "acquire_jacobian_tensor")

    def acquire_mass_matrix_tensor(self, arg0, arg1):
        return _matrices(arg0._state, "mass_matrix").acquire(arg0._state, arg1,
                                                             "acquire_mass_matrix_tensor")

    def refresh_jacobian_tensors(self, arg0):
        _matrices(arg0._state, "jacobian").refresh_all(arg0._state)
        return True

    def refresh_mass_matrix_tensors(self, arg0):
        _matrices(arg0._state, "mass_matrix").refresh_all(arg0._state)
        return True
