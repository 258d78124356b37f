"""Force sensor readings (``acquire_force_sensor_tensor``: per sensor force (3), torque (3)).

The IsaacGym docs (programming/forcesensors.html): a sensor reads "the net forces and
torques experienced by the parent body, which include external forces, contact forces,
and internal forces applied by the solver"; "a body resting on the ground plane will have
a net force of zero"; "forces are measured at the body's center of mass, but torques are
measured at the sensor's local reference frame". ``ForceSensorProperties.use_world_frame``
(its docstring): world axes, else the sensor's own.

MuJoCo gives each body's wrench without gravity (``mj_rnePostConstraint``: the body's own
part of ``cfrc_int`` plus ``cfrc_ext``, about the subtree centre of mass of its tree's
root); adding gravity's wrench gives the net one.
"""

import mujoco
import numpy as np

from ._errors import fake_limit


def check(props):
    """The fake reports net forces, forward dynamics and constraint forces together."""
    if not (props.enable_forward_dynamics_forces and props.enable_constraint_solver_forces):
        raise fake_limit("create_asset_force_sensor: the fake's sensors report the net force "
                         "(forward dynamics and constraint solver forces together); it "
                         "cannot leave either out: keep both enable_* properties True")


def rows(env, gravity):
    """(sensors of ``env``'s actors, 6) readings, in actor order then sensor order."""
    sensors = [(actor, sensor) for actor in env.actors for sensor in actor.sensors]
    if not sensors:
        return np.zeros((0, 6))
    model, data = env.model, env.data
    mujoco.mj_rnePostConstraint(model, data)
    own = data.cfrc_int.copy()
    np.subtract.at(own, model.body_parentid[1:], data.cfrc_int[1:])  # less the children's
    wrench = own + data.cfrc_ext
    out = np.zeros((len(sensors), 6))
    for n, (actor, (body, position, quat, props)) in enumerate(sensors):
        b = actor.bodies[body]
        centre = data.subtree_com[model.body_rootid[b]]
        weight = model.body_mass[b] * np.asarray(gravity)
        force = wrench[b, 3:6] + weight
        torque = wrench[b, 0:3] + np.cross(data.xipos[b] - centre, weight)
        frame = data.xmat[b].reshape(3, 3)
        point = data.xpos[b] + frame @ position
        torque = torque + np.cross(centre - point, force)
        if not props.use_world_frame:
            axes = np.zeros(9)
            mujoco.mju_quat2Mat(axes, quat)
            to_sensor = (frame @ axes.reshape(3, 3)).T
            force, torque = to_sensor @ force, to_sensor @ torque
        out[n, 0:3], out[n, 3:6] = force, torque
    return out
