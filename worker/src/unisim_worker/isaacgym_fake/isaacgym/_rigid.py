"""Gym: an env's rigid bodies by handle, and their transforms in the env frame.

A rigid body handle indexes the bodies of one env, its actors' in creation order: what
``find_actor_rigid_body_handle`` returns and ``get_rigid_transform``,
``create_rigid_body_attractor`` and the body-state tensor viewed per env take
(IsaacGymEnvs' franka_cabinet.py indexes ``rigid_body_states.view(num_envs, -1, 13)``
with the handle of its second actor's drawer).
"""

from ._actors import wxyz_to_xyzw
from ._errors import log_error
from ._types import Quat, Transform, Vec3


def env_body(env, handle, call):
    """(actor, body within the actor) of env-domain rigid body ``handle`` in EnvSim ``env``;
    None with the reason on stderr when ``env`` has no such body."""
    index = int(handle)
    if index >= 0:
        for actor in env.actors:
            if index < actor.nbody:
                env.physics()
                return actor, index
            index -= actor.nbody
    log_error("%s: rigid body handle %d is not a body of env %d (it has %d)" % (
        call, int(handle), env.index, sum(actor.nbody for actor in env.actors)))
    return None


def env_handle(env, actor, local):
    """The env-domain handle of body ``local`` of ``actor`` (an actor of EnvSim ``env``)."""
    return sum(other.nbody for other in env.actors[:env.actors.index(actor)]) + int(local)


def body_transform(actor, local):
    """Body ``local`` of ``actor``: its frame in the env (position, quaternion xyzw)."""
    body = actor.bodies[int(local)]
    return actor.data.xpos[body].copy(), wxyz_to_xyzw(actor.data.xquat[body])


class RigidMixin:
    def get_rigid_transform(self, arg0, arg1):
        """"rigid body transforms in the env frame" (its docstring)."""
        found = env_body(arg0._env, arg1, "get_rigid_transform")
        if found is None:
            return None
        position, quat = body_transform(*found)
        return Transform(Vec3(*position.tolist()), Quat(*quat.tolist()))

    def get_rigid_handle(self, arg0, arg1, arg2):
        """The handle of body ``arg2`` of the actor named ``arg1`` in env ``arg0``; -1 if
        there is none."""
        env = arg0._env
        if arg1 not in env.names:
            return -1
        actor = env.actors[env.names.index(arg1)]
        names = actor.asset.body_names
        return env_handle(env, actor, names.index(arg2)) if arg2 in names else -1

    def get_rigid_name(self, arg0, arg1):
        found = env_body(arg0._env, arg1, "get_rigid_name")
        return None if found is None else found[0].asset.body_names[found[1]]
