"""Gym: envs, aggregates, actors and their properties (the SDK's "simulation setup")."""

import math

import numpy as np

from ._actors import ActorSim
from ._enums import IndexDomain
from ._env import EnvSim
from ._errors import FakeError, log_error
from ._rigid import env_handle
from ._structs import IndexRange, RigidBodyProperties, RigidShapeProperties
from ._types import DOF_PROPERTIES, DOF_STATE, Env, Vec3


class ActorsMixin:
    # -- envs -------------------------------------------------------------------------

    def create_env(self, arg0, arg1, arg2, arg3):
        state = arg0._state
        state.check_building("create_env")
        state.close_open_aggregates("create_env")
        index = len(state.envs)
        per_row = max(1, int(arg3))
        spacing = np.array([arg2.x - arg1.x, arg2.y - arg1.y, 0.0])
        env = EnvSim(state, index, np.array([index % per_row, index // per_row, 0]) * spacing)
        env.handle = Env._make(sim=state, _env=env)
        state.envs.append(env)
        return env.handle

    def get_env_origin(self, arg0):
        return Vec3(*arg0._env.origin.tolist())

    def get_env_count(self, arg0):
        return len(arg0._state.envs)

    def get_env(self, arg0, arg1):
        return arg0._state.envs[arg1].handle

    def get_env_dof_count(self, arg0):
        return sum(actor.ndof for actor in arg0._env.actors)

    def get_env_rigid_body_count(self, arg0):
        return sum(actor.nbody for actor in arg0._env.actors)

    def begin_aggregate(self, arg0, arg1, arg2, arg3):
        """PhysX aggregates (the IsaacGym docs: actors of one env only, at most
        ``max_bodies`` bodies and ``max_shapes`` shapes; self-collision flag: whether the
        aggregate's actors collide with each other, PxAggregate's ``selfCollisions``)."""
        env = arg0._env
        env.sim.check_building("begin_aggregate")
        if env.aggregate is not None:
            log_error("begin_aggregate: env %d already has an open aggregate; aggregates do "
                      "not nest: call end_aggregate first" % env.index)
            return False  # its docstring: "false otherwise"
        env.aggregate = [int(arg1), int(arg2), bool(arg3), len(env.actors)]
        return True

    def end_aggregate(self, arg0):
        env = arg0._env
        if env.aggregate is None:
            log_error("end_aggregate: env %d has no open aggregate (begin_aggregate first)"
                      % env.index)
            return False  # its docstring: "false otherwise"
        env.sim.close_aggregate(env)
        return True

    # -- actors -----------------------------------------------------------------------

    def create_actor(self, env, asset, pose, name=None, group=-1, filter=-1, segmentationId=0):
        actor = ActorSim(asset._data, pose, group, filter, asset._sensors)
        actor.index = len(env.sim.actors)
        handle = env.sim.add_actor(env._env, actor)
        env._env.names.append(name or "actor%d" % handle)
        return handle

    def _actor(self, env, handle):
        actors = env._env.actors
        if not 0 <= int(handle) < len(actors):
            raise FakeError("actor handle %r is not an actor of env %d (it has %d)"
                            % (handle, env._env.index, len(actors)))
        env._env.physics()
        return actors[int(handle)]

    def get_actor_count(self, arg0):
        return len(arg0._env.actors)

    def get_actor_handle(self, arg0, arg1):
        return int(arg1)

    def get_actor_name(self, arg0, arg1):
        return arg0._env.names[arg1]

    def find_actor_handle(self, arg0, arg1):
        names = arg0._env.names
        return names.index(arg1) if arg1 in names else -1

    def get_actor_index(self, arg0, arg1, arg2):
        actor = self._actor(arg0, arg1)
        return int(arg1) if arg2 != IndexDomain.DOMAIN_SIM else actor.index

    def find_actor_index(self, arg0, arg1, arg2):
        handle = self.find_actor_handle(arg0, arg1)
        return handle if handle < 0 else self.get_actor_index(arg0, handle, arg2)

    def get_actor_dof_count(self, arg0, arg1):
        return self._actor(arg0, arg1).ndof

    def get_actor_dof_names(self, arg0, arg1):
        return list(self._actor(arg0, arg1).asset.dof_names)

    def get_actor_dof_dict(self, arg0, arg1):
        return {n: i for i, n in enumerate(self._actor(arg0, arg1).asset.dof_names)}

    def get_actor_joint_dict(self, arg0, arg1):
        """The actor's joints (``_assets``' ``joint_names``) by name."""
        return {n: i for i, n in enumerate(self._actor(arg0, arg1).asset.joint_names)}

    def find_actor_dof_handle(self, arg0, arg1, arg2):
        names = self._actor(arg0, arg1).asset.dof_names
        return names.index(arg2) if arg2 in names else -1

    def get_actor_rigid_body_count(self, arg0, arg1):
        return self._actor(arg0, arg1).nbody

    def get_actor_rigid_body_names(self, arg0, arg1):
        return list(self._actor(arg0, arg1).asset.body_names)

    def get_actor_rigid_body_dict(self, arg0, arg1):
        return {n: i for i, n in enumerate(self._actor(arg0, arg1).asset.body_names)}

    def find_actor_rigid_body_handle(self, arg0, arg1, arg2):
        """The body's handle in its env (``_rigid``), -1 if the actor has no such body."""
        actor = self._actor(arg0, arg1)
        names = actor.asset.body_names
        return env_handle(arg0._env, actor, names.index(arg2)) if arg2 in names else -1

    def get_actor_rigid_body_handle(self, arg0, arg1, arg2):
        return env_handle(arg0._env, self._actor(arg0, arg1), arg2)

    def find_actor_rigid_body_index(self, arg0, arg1, arg2, arg3):
        names = self._actor(arg0, arg1).asset.body_names
        local = names.index(arg2) if arg2 in names else -1
        if local < 0 or arg3 == IndexDomain.DOMAIN_ACTOR:
            return local
        env, actor = arg0._env, self._actor(arg0, arg1)
        offsets = env.sim.body_offsets()
        first = env.actors[0].index if arg3 == IndexDomain.DOMAIN_ENV else 0
        return int(offsets[actor.index] - offsets[first] + local)

    def get_actor_rigid_shape_count(self, arg0, arg1):
        return len(self._actor(arg0, arg1).geoms)

    def get_actor_scale(self, arg0, arg1):
        return self._actor(arg0, arg1).scale

    def set_actor_scale(self, arg0, arg1, arg2):
        """Any positive scale, relative to the asset (``ActorSim.set_scale``): IsaacGym's
        examples/actor_scaling.py scales actors 0.5 to 2 after create_actor."""
        actor = self._actor(arg0, arg1)
        scale = float(arg2)
        if not (math.isfinite(scale) and scale > 0):
            log_error("set_actor_scale: scale %r of actor %d in env %d is not a positive "
                      "finite number: pass a scale > 0 (1.0: the asset's size)"
                      % (scale, int(arg1), arg0._env.index))
            return False
        actor.set_scale(scale)
        return True

    # -- properties -------------------------------------------------------------------

    def get_actor_dof_properties(self, arg0, arg1):
        return self._actor(arg0, arg1).props.copy()

    def set_actor_dof_properties(self, arg0, arg1, arg2):
        actor = self._actor(arg0, arg1)
        props = np.asarray(arg2)
        if props.dtype.names is None or set(DOF_PROPERTIES.names) - set(props.dtype.names) \
                or props.shape != (actor.ndof,):
            log_error("set_actor_dof_properties: expected a structured array of %d DOF "
                      "properties (get_actor_dof_properties' dtype), got %r of shape %s"
                      % (actor.ndof, props.dtype, props.shape))
            return False
        converted = np.zeros(actor.ndof, dtype=DOF_PROPERTIES)
        for field in DOF_PROPERTIES.names:
            converted[field] = props[field]
        actor.set_props(converted)
        return True

    def get_actor_rigid_body_properties(self, arg0, arg1):
        result = []
        for mass, com, inertia in self._actor(arg0, arg1).body_properties():
            props = RigidBodyProperties()
            props.mass = mass
            props.invMass = 1.0 / mass if mass > 0 else 0.0
            props.com = Vec3(*com.tolist())
            props.inertia.x, props.inertia.y, props.inertia.z = (
                Vec3(inertia[0], 0, 0), Vec3(0, inertia[1], 0), Vec3(0, 0, inertia[2]))
            result.append(props)
        return result

    def set_actor_rigid_body_properties(self, env, actorHandle, props, recomputeInertia=False):
        actor = self._actor(env, actorHandle)
        if len(props) != actor.nbody:
            log_error("set_actor_rigid_body_properties: %d properties for %d bodies"
                      % (len(props), actor.nbody))
            return False
        actor.set_body_properties([(p.mass, [p.com.x, p.com.y, p.com.z],
                                    [p.inertia.x.x, p.inertia.y.y, p.inertia.z.z])
                                   for p in props], bool(recomputeInertia))
        return True

    def get_actor_rigid_shape_properties(self, arg0, arg1):
        result = []
        for friction in self._actor(arg0, arg1).shape_friction:
            props = RigidShapeProperties()
            props.friction = float(friction)
            result.append(props)
        return result

    def get_actor_rigid_body_shape_indices(self, arg0, arg1):
        """Each body's slice of the actor's shape list (its geoms; MuJoCo orders geoms by
        body, as the shape list is)."""
        actor = self._actor(arg0, arg1)
        owners = actor.model.geom_bodyid[actor.geoms]
        result = []
        for body in actor.bodies:
            indices = IndexRange()
            indices.start = int((owners < body).sum())
            indices.count = int((owners == body).sum())
            result.append(indices)
        return result

    def set_actor_rigid_shape_properties(self, arg0, arg1, arg2):
        actor = self._actor(arg0, arg1)
        if len(arg2) != len(actor.geoms):
            log_error("set_actor_rigid_shape_properties: %d properties for %d shapes"
                      % (len(arg2), len(actor.geoms)))
            return False
        actor.set_shape_friction([props.friction for props in arg2])
        return True

    def set_rigid_body_color(self, arg0, arg1, arg2, arg3, arg4):
        actor = self._actor(arg0, arg1)
        if not 0 <= int(arg2) < actor.nbody:
            log_error("set_rigid_body_color: body %d of an actor with %d bodies"
                      % (int(arg2), actor.nbody))
            return
        actor.set_color(arg2, (arg4.x, arg4.y, arg4.z))

    def get_rigid_body_color(self, arg0, arg1, arg2, arg3):
        actor = self._actor(arg0, arg1)
        body = actor.bodies[int(arg2)]
        geoms = np.flatnonzero(actor.model.geom_bodyid == body)
        rgb = actor.model.geom_rgba[geoms[0], 0:3] if len(geoms) else np.ones(3)
        return Vec3(*rgb.tolist())

    def get_actor_force_sensor_count(self, arg0, arg1):
        return len(self._actor(arg0, arg1).sensors)

    def enable_actor_dof_force_sensors(self, arg0, arg1):
        actor = self._actor(arg0, arg1)
        actor.dof_forces = True
        return True

    # -- state and controls -----------------------------------------------------------

    def get_actor_dof_states(self, arg0, arg1, arg2):
        states = self._actor(arg0, arg1).dof_states()
        result = np.zeros(len(states), dtype=DOF_STATE)
        result["pos"], result["vel"] = states[:, 0], states[:, 1]
        return result

    def set_actor_dof_states(self, arg0, arg1, arg2, arg3):
        actor = self._actor(arg0, arg1)
        if len(arg2) != actor.ndof:
            log_error("set_actor_dof_states: %d states for %d DOFs" % (len(arg2), actor.ndof))
            return False
        current = actor.dof_states()
        if int(arg3) & 1:
            current[:, 0] = arg2["pos"]
        if int(arg3) & 2:
            current[:, 1] = arg2["vel"]
        actor.set_dof_states(current)
        return True

    def set_actor_dof_position_targets(self, arg0, arg1, arg2):
        self._actor(arg0, arg1).position_target[:] = np.asarray(arg2, dtype=np.float64)
        return True

    def set_actor_dof_velocity_targets(self, arg0, arg1, arg2):
        self._actor(arg0, arg1).velocity_target[:] = np.asarray(arg2, dtype=np.float64)
        return True

    def apply_actor_dof_efforts(self, arg0, arg1, arg2):
        self._actor(arg0, arg1).effort[:] = np.asarray(arg2, dtype=np.float64)
        return True
