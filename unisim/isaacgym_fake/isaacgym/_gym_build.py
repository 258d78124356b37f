"""Gym: sims, assets, envs, actors and their properties (the SDK's "simulation setup")."""

import copy
import os
import sys
import time

import numpy as np
import torch

from ._assets import AssetData, ImportFailure
from ._enums import IndexDomain, SimType, UpAxis
from ._sim import FakeError, SimState
from ._types import (
    DOF_PROPERTIES,
    DOF_STATE,
    Asset,
    AssetOptions,
    Env,
    IndexRange,
    RigidBodyProperties,
    RigidShapeProperties,
    Sim,
    SimParams,
    Vec3,
)


def _error(message):
    """The SDK logs its failures on stderr and returns None or False."""
    print("[isaacgym fake] Error: %s" % message, file=sys.stderr)


class BuildMixin:
    # -- sim --------------------------------------------------------------------------

    def create_sim(self, compute_device=0, graphics_device=0, type=SimType.SIM_FLEX,
                   params=None):
        params = copy.deepcopy(SimParams() if params is None else params)
        if type != SimType.SIM_PHYSX:
            _error("create_sim: the fake simulates SIM_PHYSX only, got %r" % (type,))
            return None
        if params.up_axis != UpAxis.UP_AXIS_Z:
            raise FakeError("create_sim: the fake supports up_axis=UP_AXIS_Z only (the SDK's "
                            "default is UP_AXIS_Y): set params.up_axis = gymapi.UP_AXIS_Z")
        if params.use_gpu_pipeline:
            if not torch.cuda.is_available():
                _error("create_sim: use_gpu_pipeline needs a CUDA device, and torch sees none "
                       "(torch.cuda.is_available() is False): use the CPU pipeline "
                       "(params.use_gpu_pipeline = False)")
                return None
            if not 0 <= int(compute_device) < torch.cuda.device_count():
                _error("create_sim: compute_device %d is not a CUDA device (torch sees %d)"
                       % (compute_device, torch.cuda.device_count()))
                return None
        return Sim._make(_state=SimState(compute_device, graphics_device, params))

    def get_sim_params(self, arg0):
        return copy.deepcopy(arg0._state.params)

    def set_sim_params(self, arg0, arg1):
        if bool(arg1.use_gpu_pipeline) != arg0._state.gpu:
            raise FakeError("set_sim_params cannot switch the pipeline of an existing sim")
        arg0._state.params = copy.deepcopy(arg1)

    def add_ground(self, sim, params):
        state = sim._state
        normal = np.array([params.normal.x, params.normal.y, params.normal.z])
        if not np.allclose(normal, [0.0, 0.0, 1.0]):
            raise FakeError("add_ground: the fake's ground is the plane z = 0 (Z-up), normal "
                            "(0, 0, 1); got normal %s" % normal.tolist())
        if state.actors:
            raise FakeError("add_ground after create_actor: the fake needs the ground first")
        state.ground = (float(params.distance), float(params.static_friction),
                        float(params.restitution))

    def prepare_sim(self, arg0):
        return arg0._state.prepare()

    def simulate(self, arg0):
        arg0._state.simulate()

    def fetch_results(self, arg0, arg1):
        for actor in arg0._state.actors:
            actor.fetch()

    def get_sim_time(self, arg0):
        return arg0._state.time

    def get_elapsed_time(self, arg0):
        return time.time()

    def sync_frame_time(self, arg0):
        """Real time pacing of the viewer: nothing to wait for headless."""

    def destroy_sim(self, arg0):
        state = arg0._state
        for camera in state.cameras:
            camera.close()
        state.destroyed = True

    def get_sim_actor_count(self, arg0):
        return arg0._state.count("actors")

    def get_sim_dof_count(self, arg0):
        return arg0._state.count("dofs")

    def get_sim_rigid_body_count(self, arg0):
        return arg0._state.count("bodies")

    # -- assets -----------------------------------------------------------------------

    def load_asset(self, sim, rootpath, filename, options=None):
        if not str(filename).lower().endswith(".xml"):
            _error("load_asset: the fake imports MJCF (.xml) only, got %s" % filename)
            return None
        return self.load_mjcf(sim, rootpath, filename, options)

    def load_mjcf(self, sim, rootpath, filename, options=None):
        try:
            data = AssetData(os.path.join(rootpath, filename),
                             AssetOptions() if options is None else options)
        except ImportFailure as failure:
            _error("load_asset: %s" % failure)
            return None
        return Asset._make(_data=data)

    def get_asset_dof_count(self, arg0):
        return len(arg0._data.dof_names)

    def get_asset_dof_names(self, arg0):
        return list(arg0._data.dof_names)

    def get_asset_dof_name(self, arg0, arg1):
        return arg0._data.dof_names[arg1]

    def get_asset_dof_dict(self, arg0):
        return {name: i for i, name in enumerate(arg0._data.dof_names)}

    def find_asset_dof_index(self, arg0, arg1):
        names = arg0._data.dof_names
        return names.index(arg1) if arg1 in names else -1

    def get_asset_rigid_body_count(self, arg0):
        return len(arg0._data.body_names)

    def get_asset_rigid_body_names(self, arg0):
        return list(arg0._data.body_names)

    def get_asset_rigid_body_name(self, arg0, arg1):
        return arg0._data.body_names[arg1]

    def get_asset_rigid_body_dict(self, arg0):
        return {name: i for i, name in enumerate(arg0._data.body_names)}

    def find_asset_rigid_body_index(self, arg0, arg1):
        names = arg0._data.body_names
        return names.index(arg1) if arg1 in names else -1

    def get_asset_rigid_shape_count(self, arg0):
        return arg0._data.shape_count

    def get_asset_rigid_shape_properties(self, arg0):
        result = []
        for friction in arg0._data.shape_friction:
            props = RigidShapeProperties()
            props.friction = float(friction)
            result.append(props)
        return result

    def set_asset_rigid_shape_properties(self, arg0, arg1):
        """Friction per shape for the actors created from this asset afterwards (legged_gym
        randomises friction so, env by env)."""
        data = arg0._data
        if len(arg1) != data.shape_count:
            _error("set_asset_rigid_shape_properties: %d properties for %d shapes"
                   % (len(arg1), data.shape_count))
            return False
        data.shape_friction = np.array([float(props.friction) for props in arg1])
        return True

    def get_asset_joint_count(self, arg0):
        return len(arg0._data.dof_names)

    def get_asset_joint_names(self, arg0):
        return list(arg0._data.dof_names)

    def get_asset_actuator_count(self, arg0):
        return len(arg0._data.actuator_names)

    def get_asset_actuator_name(self, arg0, arg1):
        return arg0._data.actuator_names[arg1]

    def get_asset_dof_properties(self, arg0):
        return arg0._data.default_props.copy()

    # -- envs and actors --------------------------------------------------------------

    def create_env(self, arg0, arg1, arg2, arg3):
        state = arg0._state
        if state.prepared:
            raise FakeError("create_env after prepare_sim: create every env first")
        index = len(state.envs)
        per_row = max(1, int(arg3))
        spacing = np.array([arg2.x - arg1.x, arg2.y - arg1.y, 0.0])
        origin = np.array([index % per_row, index // per_row, 0]) * spacing
        env = Env._make(sim=state, index=index, origin=origin, actors=[], cameras=[],
                        names=[])
        state.envs.append(env)
        return env

    def get_env_origin(self, arg0):
        return Vec3(*arg0.origin.tolist())

    def get_env_count(self, arg0):
        return len(arg0._state.envs)

    def get_env(self, arg0, arg1):
        return arg0._state.envs[arg1]

    def create_actor(self, env, asset, pose, name=None, group=-1, filter=-1, segmentationId=0):
        handle = env.sim.add_actor(env, asset._data, pose, filter != 0)
        env.names.append(name or "actor%d" % handle)
        return handle

    def _actor(self, env, handle):
        if not 0 <= int(handle) < len(env.actors):
            raise FakeError("actor handle %r is not an actor of env %d (it has %d)"
                            % (handle, env.index, len(env.actors)))
        return env.sim.actors[env.actors[int(handle)]]

    def get_actor_count(self, arg0):
        return len(arg0.actors)

    def get_actor_handle(self, arg0, arg1):
        return int(arg1)

    def get_actor_name(self, arg0, arg1):
        return arg0.names[arg1]

    def find_actor_handle(self, arg0, arg1):
        return arg0.names.index(arg1) if arg1 in arg0.names else -1

    def get_actor_index(self, arg0, arg1, arg2):
        self._actor(arg0, arg1)
        return int(arg1) if arg2 != IndexDomain.DOMAIN_SIM else arg0.actors[int(arg1)]

    def get_actor_dof_count(self, arg0, arg1):
        return self._actor(arg0, arg1).ndof

    def get_actor_dof_names(self, arg0, arg1):
        return list(self._actor(arg0, arg1).asset.dof_names)

    def get_actor_dof_dict(self, arg0, arg1):
        return {n: i for i, n in enumerate(self._actor(arg0, arg1).asset.dof_names)}

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
        names = self._actor(arg0, arg1).asset.body_names
        return names.index(arg2) if arg2 in names else -1

    def find_actor_rigid_body_index(self, arg0, arg1, arg2, arg3):
        local = self.find_actor_rigid_body_handle(arg0, arg1, arg2)
        if local < 0 or arg3 == IndexDomain.DOMAIN_ACTOR:
            return local
        state = arg0.sim
        env_first = arg0.actors[0]
        actor = arg0.actors[int(arg1)]
        offsets = state.body_offsets()
        base = offsets[actor] - (offsets[env_first] if arg3 == IndexDomain.DOMAIN_ENV else 0)
        return int(base + local)

    def get_actor_dof_properties(self, arg0, arg1):
        return self._actor(arg0, arg1).props.copy()

    def set_actor_dof_properties(self, arg0, arg1, arg2):
        actor = self._actor(arg0, arg1)
        props = np.asarray(arg2)
        if props.dtype.names is None or set(DOF_PROPERTIES.names) - set(props.dtype.names) \
                or props.shape != (actor.ndof,):
            _error("set_actor_dof_properties: expected a structured array of %d DOF "
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
            _error("set_actor_rigid_body_properties: %d properties for %d bodies"
                   % (len(props), actor.nbody))
            return False
        for body, p in enumerate(props, start=1):
            actor.model.body_mass[body] = p.mass
            actor.model.body_ipos[body] = [p.com.x, p.com.y, p.com.z]
            actor.model.body_inertia[body] = [p.inertia.x.x, p.inertia.y.y, p.inertia.z.z]
        return True

    def get_actor_rigid_shape_properties(self, arg0, arg1):
        actor = self._actor(arg0, arg1)
        shapes = np.flatnonzero(actor.model.geom_bodyid > 0)
        result = []
        for geom in shapes:
            props = RigidShapeProperties()
            props.friction = float(actor.model.geom_friction[geom, 0])
            result.append(props)
        return result

    def get_actor_rigid_body_shape_indices(self, arg0, arg1):
        """Each body's slice of the actor's shape list (its geoms; MuJoCo orders geoms by
        body, as the shape list is)."""
        model = self._actor(arg0, arg1).model
        owners = model.geom_bodyid[model.geom_bodyid > 0]
        result = []
        for body in range(1, model.nbody):
            indices = IndexRange()
            indices.start = int((owners < body).sum())
            indices.count = int((owners == body).sum())
            result.append(indices)
        return result

    def set_actor_rigid_shape_properties(self, arg0, arg1, arg2):
        actor = self._actor(arg0, arg1)
        shapes = np.flatnonzero(actor.model.geom_bodyid > 0)
        if len(arg2) != len(shapes):
            _error("set_actor_rigid_shape_properties: %d properties for %d shapes"
                   % (len(arg2), len(shapes)))
            return False
        for geom, props in zip(shapes, arg2):
            actor.model.geom_friction[geom, 0] = props.friction
        return True

    def get_actor_dof_states(self, arg0, arg1, arg2):
        states = self._actor(arg0, arg1).dof_states()
        result = np.zeros(len(states), dtype=DOF_STATE)
        result["pos"], result["vel"] = states[:, 0], states[:, 1]
        return result

    def set_actor_dof_states(self, arg0, arg1, arg2, arg3):
        actor = self._actor(arg0, arg1)
        if len(arg2) != actor.ndof:
            _error("set_actor_dof_states: %d states for %d DOFs" % (len(arg2), actor.ndof))
            return False
        current = actor.dof_states()
        if int(arg3) & 1:
            current[:, 0] = arg2["pos"]
        if int(arg3) & 2:
            current[:, 1] = arg2["vel"]
        actor.set_dof_states(current)
        return True

    def set_actor_dof_position_targets(self, arg0, arg1, arg2):
        actor = self._actor(arg0, arg1)
        actor.position_target[:] = np.asarray(arg2, dtype=np.float64)
        return True

    def set_actor_dof_velocity_targets(self, arg0, arg1, arg2):
        actor = self._actor(arg0, arg1)
        actor.velocity_target[:] = np.asarray(arg2, dtype=np.float64)
        return True

    def apply_actor_dof_efforts(self, arg0, arg1, arg2):
        actor = self._actor(arg0, arg1)
        actor.effort[:] = np.asarray(arg2, dtype=np.float64)
        return True
