"""The CI quadruped's config, as legged_gym writes one: nested classes, instantiated whole.

Flat ground, velocity commands, pushes on, curriculum off, PD control with torques clipped
by the URDF's effort limits. Our own values for our own robot (assets/quadruped.urdf).
Python 3.8.
"""
# ruff: noqa: RUF012 - a legged_gym config is mutable class attributes by design

import os

ASSETS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets")


class Config:
    """A config whose nested classes become instances, so that a run may change its copy."""

    def __init__(self):
        _instantiate(self)


def _instantiate(obj):
    for name in dir(obj):
        if name.startswith("_"):
            continue
        value = getattr(obj, name)
        if isinstance(value, type):
            member = value()
            setattr(obj, name, member)
            _instantiate(member)


class QuadrupedFlatCfg(Config):
    seed = 1

    class env:
        num_envs = 64
        num_observations = 36
        num_privileged_obs = 41  # observations, base height, feet in contact
        num_actions = 8
        env_spacing = 2.0
        send_timeouts = True
        episode_length_s = 4.0

    class terrain:
        mesh_type = "plane"
        static_friction = 1.0
        dynamic_friction = 1.0
        restitution = 0.0
        curriculum = False

    class commands:
        resampling_time = 2.0  # seconds
        lin_vel_x = [0.0, 0.6]
        lin_vel_y = [-0.2, 0.2]
        ang_vel_yaw = [-0.5, 0.5]

    class init_state:
        pos = [0.0, 0.0, 0.38]
        rot = [0.0, 0.0, 0.0, 1.0]
        default_joint_angles = {"hip": 0.4, "knee": -0.8}  # by name fragment

    class control:
        stiffness = 20.0
        damping = 0.5
        action_scale = 0.25
        decimation = 4

    class asset:
        file = os.path.join(ASSETS, "quadruped.urdf")
        foot_name = "foot"
        terminate_after_contacts_on = ["base"]
        self_collisions = 1  # 1 disables them (create_actor's filter)
        collapse_fixed_joints = True
        replace_cylinder_with_capsule = True
        default_dof_drive_mode = 3  # effort
        angular_damping = 0.0
        linear_damping = 0.0
        armature = 0.0
        thickness = 0.01

    class domain_rand:
        push_robots = True
        push_interval_s = 2.0
        max_push_vel_xy = 0.5

    class rewards:
        tracking_sigma = 0.25
        only_positive_rewards = True

        class scales:
            tracking_lin_vel = 1.0
            tracking_ang_vel = 0.5
            lin_vel_z = -2.0
            ang_vel_xy = -0.05
            orientation = -1.0
            torques = -1e-4
            action_rate = -0.01
            termination = -1.0

    class normalization:
        clip_observations = 100.0
        clip_actions = 100.0
        lin_vel = 2.0
        ang_vel = 0.25
        dof_vel = 0.05

    class sim:
        dt = 0.005
        substeps = 1
        gravity = [0.0, 0.0, -9.81]
        up_axis = 1  # z
