"""Quadruped: walk forward (+x) on the bundled ``quadruped``'s position servos."""

from __future__ import annotations

import torch

from ..physics_randomization import PhysicsRandomization, Push, Uniform, friction, mass
from .base import Task

BODIES = ("world", "torso", "front_left", "front_left_shin", "front_right", "front_right_shin",
          "back_left", "back_left_shin", "back_right", "back_right_shin")


def rotate_inverse(quat: torch.Tensor, vec: torch.Tensor) -> torch.Tensor:
    """Rotate ``vec`` (N, 3) by the inverse of MuJoCo quaternions ``quat`` (N, 4, w first):
    world-frame vectors into the body frame."""
    w, u = quat[:, :1], quat[:, 1:]
    return (vec * (2.0 * w.square() - 1.0) - 2.0 * w * torch.cross(u, vec, dim=1)
            + 2.0 * u * (u * vec).sum(dim=1, keepdim=True))


class QuadrupedWalk(Task):
    """Walk forward for 8 s (400 steps at 50 Hz) from the ``stand`` keyframe, perturbed.

    Actions (8) are joint targets around the standing pose (``0.5 rad`` per unit).
    Observations (36): torso height, gravity and velocities in the torso frame, joint
    offsets and velocities, previous actions, a gait clock. Rewards: forward speed (capped),
    a bonus for being up, penalties on tilting, falling, sideways speed, spinning and
    jerky actions.
    Terminated when the torso drops below ``min_height`` or tilts past about 70 degrees.
    """

    model = "quadruped"
    keyframe = "stand"
    camera = "track"
    substeps = 4  # timestep 0.005 s -> control at 50 Hz
    max_episode_length = 400
    action_scale = 0.5  # rad of servo target per unit action
    min_height = 0.25  # m (standing: 0.5)
    target_speed = 0.6  # m/s: forward speed beyond this earns nothing more
    gait_hz = 1.5  # the clock in the observations
    alive_bonus = 0.25  # per step
    # legged_gym's recipe: friction of every geom (floor included: MuJoCo takes the larger
    # of two geoms' frictions), added torso mass, a push every 4 s.
    randomization = PhysicsRandomization(
        parameters=(friction(Uniform(0.3, 1.25), bodies=BODIES, label="friction"),
                    mass(Uniform(-1.0, 2.0), bodies=["torso"], operation="add",
                         label="added_mass")),
        push=Push(Uniform(-0.5, 0.5), axes=("x", "y"), interval=200))

    def setup(self) -> None:
        self.default_joints = self.default_qpos[7:]
        self.gravity = torch.tensor([0.0, 0.0, -1.0], dtype=torch.float64).expand(self.num_envs, 3)

    def initial_state(self, env_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = len(env_ids)
        qpos = self.default_qpos.repeat(n, 1)
        qpos[:, 7:] += self.uniform(-0.2, 0.2, n, self.num_actions)
        qvel = self.uniform(-0.1, 0.1, n, self.default_qvel.shape[0])
        return qpos, qvel

    def action_to_ctrl(self, actions: torch.Tensor) -> torch.Tensor:
        return (self.default_joints + self.action_scale * actions).clamp(self.ctrl_low,
                                                                         self.ctrl_high)

    def projected_gravity(self) -> torch.Tensor:
        return rotate_inverse(self.qpos[:, 3:7], self.gravity)

    def clock(self) -> torch.Tensor:
        """``(sin, cos)`` of a ``gait_hz`` phase: lets a feed-forward policy keep a rhythm."""
        phase = (2 * torch.pi * self.gait_hz * self.step_dt) * self.episode_length_buf
        return torch.stack([phase.sin(), phase.cos()], dim=1).double()

    def observations(self) -> torch.Tensor:
        quat = self.qpos[:, 3:7]
        return torch.cat([
            self.qpos[:, 2:3],
            self.projected_gravity(),
            rotate_inverse(quat, self.qvel[:, 0:3]),
            self.qvel[:, 3:6] * 0.25,  # a free joint's angular velocity is in the body frame
            self.qpos[:, 7:] - self.default_joints,
            self.qvel[:, 6:] * 0.05,
            self.actions,
            self.clock(),
        ], dim=1)

    def rewards(self) -> dict[str, torch.Tensor]:
        action_rate = (self.actions - self.previous_actions).square().sum(dim=1)
        return {
            # Capped, so that diving forward pays no more than walking.
            "forward": 3.0 * self.qvel[:, 0].clamp(max=self.target_speed),
            "alive": torch.full((self.num_envs,), self.alive_bonus, dtype=torch.float64),
            "upright": -2.0 * self.projected_gravity()[:, :2].square().sum(dim=1),
            "fall": -5.0 * self.terminated().double(),
            "sideways": -2.0 * self.qvel[:, 1].square(),
            "spin": -0.05 * self.qvel[:, 5].square(),
            "action_rate": -0.01 * action_rate,
        }

    def terminated(self) -> torch.Tensor:
        return (self.qpos[:, 2] < self.min_height) | (self.projected_gravity()[:, 2] > -0.35)
