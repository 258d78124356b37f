"""Gym: sims, the ground, assets and what is defined on assets (actuators, force sensors)."""

import copy
import os
import time

import numpy as np
import torch

from . import _body_forces, _sensors
from ._assets import AssetData, ImportFailure
from ._enums import SimType, UpAxis
from ._errors import fake_limit, log_error
from ._primitives import primitive_asset
from ._sim import SimState
from ._structs import (
    ActuatorProperties,
    AssetOptions,
    ForceSensorProperties,
    RigidShapeProperties,
    SimParams,
)
from ._types import Asset, Sim


def _primitive(kind, dimensions, options):
    """The asset of ``create_<kind>`` (``_primitives``), or None with the reason on stderr."""
    try:
        data = primitive_asset(kind, dimensions, AssetOptions() if options is None else options)
    except ImportFailure as failure:
        log_error(str(failure))
        return None
    return Asset._make(_data=data, _sensors=[])


class BuildMixin:
    # -- sim --------------------------------------------------------------------------

    def create_sim(self, compute_device=0, graphics_device=0, type=SimType.SIM_FLEX,
                   params=None):
        params = copy.deepcopy(SimParams() if params is None else params)
        if type != SimType.SIM_PHYSX:
            log_error("create_sim: the fake simulates SIM_PHYSX only, got %r" % (type,))
            return None
        if params.up_axis != UpAxis.UP_AXIS_Z:
            raise fake_limit("create_sim: the fake supports up_axis=UP_AXIS_Z only (the SDK "
                             "also takes UP_AXIS_Y, its default): set params.up_axis = "
                             "gymapi.UP_AXIS_Z")
        if params.use_gpu_pipeline:
            if not torch.cuda.is_available():
                log_error("create_sim: use_gpu_pipeline needs a CUDA device, and torch sees none "
                       "(torch.cuda.is_available() is False): use the CPU pipeline "
                       "(params.use_gpu_pipeline = False)")
                return None
            if not 0 <= int(compute_device) < torch.cuda.device_count():
                log_error("create_sim: compute_device %d is not a CUDA device (torch sees %d)"
                       % (compute_device, torch.cuda.device_count()))
                return None
        return Sim._make(_state=SimState(compute_device, graphics_device, params))

    def get_sim_params(self, arg0):
        return copy.deepcopy(arg0._state.params)

    def set_sim_params(self, arg0, arg1):
        if bool(arg1.use_gpu_pipeline) != arg0._state.gpu:
            raise fake_limit("set_sim_params: the fake cannot switch the pipeline of an "
                             "existing sim (its buffers live on the pipeline's device)")
        arg0._state.params = copy.deepcopy(arg1)

    def add_ground(self, sim, params):
        state = sim._state
        normal = np.array([params.normal.x, params.normal.y, params.normal.z])
        if not np.allclose(normal, [0.0, 0.0, 1.0]):
            raise fake_limit("add_ground: the fake's ground is the plane z = 0 (Z-up), normal "
                             "(0, 0, 1); got normal %s" % normal.tolist())
        state.check_building("add_ground")
        state.ground.set_plane(params.distance, params.static_friction)
        state.changed_ground()

    def add_heightfield(self, arg0, arg1, arg2):
        state = arg0._state
        state.check_building("add_heightfield")
        state.ground.add_heightfield(arg1, arg2)
        state.changed_ground()

    def add_triangle_mesh(self, arg0, arg1, arg2, arg3):
        state = arg0._state
        state.check_building("add_triangle_mesh")
        state.ground.add_triangle_mesh(arg1, arg2, arg3)
        state.changed_ground()

    def prepare_sim(self, arg0):
        return arg0._state.prepare()

    def simulate(self, arg0):
        arg0._state.simulate()
        _body_forces.clear(arg0._state)  # applied "for the immediate timestep"

    def fetch_results(self, arg0, arg1):
        """The state ``step_graphics`` shows next; none to keep without graphics (it shows
        nothing there), which is every headless training run."""
        if arg0._state.graphics_device < 0:
            return
        for env in arg0._state.envs:
            env.fetched_qpos = env.physics()[1].qpos.copy()

    def get_frame_count(self, arg0):
        return arg0._state.frames  # one frame per simulate

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
        state.pool.close()
        state.destroyed = True

    def get_sim_actor_count(self, arg0):
        return arg0._state.count("actors")

    def get_sim_dof_count(self, arg0):
        return arg0._state.count("dofs")

    def get_sim_rigid_body_count(self, arg0):
        return arg0._state.count("bodies")

    def get_sim_force_sensor_count(self, arg0):
        return arg0._state.count("sensors")

    # -- assets -----------------------------------------------------------------------

    def load_asset(self, sim, rootpath, filename, options=None):
        """By the file's extension: .urdf or .xml (MJCF), as the docs' "Loading Assets"."""
        if not str(filename).lower().endswith((".xml", ".urdf")):
            log_error("load_asset: the fake imports URDF (.urdf) and MJCF (.xml), got %s"
                   % filename)
            return None
        try:
            data = AssetData(os.path.join(rootpath, filename),
                             AssetOptions() if options is None else options)
        except ImportFailure as failure:
            log_error("load_asset: %s" % failure)
            return None
        return Asset._make(_data=data, _sensors=[])

    def load_mjcf(self, sim, rootpath, filename, options=None):
        return self.load_asset(sim, rootpath, filename, options)

    def load_urdf(self, sim, rootpath, filename, options=None):
        return self.load_asset(sim, rootpath, filename, options)

    def create_box(self, sim, width, height, depth, options=None):
        return _primitive("box", (width, height, depth), options)

    def create_sphere(self, sim, radius, options=None):
        return _primitive("sphere", (radius,), options)

    def create_capsule(self, sim, radius, width, options=None):
        return _primitive("capsule", (radius, width), options)

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
            log_error("set_asset_rigid_shape_properties: %d properties for %d shapes"
                   % (len(arg1), data.shape_count))
            return False
        data.shape_friction = np.array([float(props.friction) for props in arg1])
        return True

    def get_asset_joint_count(self, arg0):
        return len(arg0._data.joint_names)

    def get_asset_joint_names(self, arg0):
        return list(arg0._data.joint_names)

    def get_asset_actuator_count(self, arg0):
        return len(arg0._data.actuator_names)

    def get_asset_actuator_name(self, arg0, arg1):
        return arg0._data.actuator_names[arg1]

    def get_asset_dof_properties(self, arg0):
        return arg0._data.default_props.copy()

    def get_asset_actuator_properties(self, arg0):
        """The MJCF's actuators: IsaacGymEnvs' Ant and Humanoid read ``motor_effort`` (the
        MJCF ``gear``) to scale their actions into actuation forces."""
        result = []
        for actuator in arg0._data.actuators:
            props = ActuatorProperties()
            props.motor_effort = float(actuator["gear"])
            props.control_limited = bool(actuator["ctrllimited"])
            props.lower_control_limit, props.upper_control_limit = map(
                float, actuator["ctrlrange"])
            props.force_limited = bool(actuator["forcelimited"])
            props.lower_force_limit, props.upper_force_limit = map(
                float, actuator["forcerange"])
            props.kp, props.kv = float(actuator["kp"]), float(actuator["kv"])
            result.append(props)
        return result

    def get_asset_actuator_joint_name(self, arg0, arg1):
        return arg0._data.actuators[arg1]["joint"]

    def create_asset_force_sensor(self, asset, body_idx, local_pose, props=None):
        """A sensor on every actor created from ``asset`` afterwards (the docs: "Force
        sensors are created on assets"); returns its index on the asset, -1 on failure."""
        props = ForceSensorProperties() if props is None else props
        if not 0 <= int(body_idx) < len(asset._data.body_names):
            log_error("create_asset_force_sensor: body %d of an asset with %d bodies"
                   % (int(body_idx), len(asset._data.body_names)))
            return -1
        _sensors.check(props)
        p, r = local_pose.p, local_pose.r
        asset._sensors.append((int(body_idx), np.array([p.x, p.y, p.z]),
                               np.array([r.w, r.x, r.y, r.z]), props))
        return len(asset._sensors) - 1
