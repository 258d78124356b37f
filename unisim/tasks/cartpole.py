"""Cartpole: keep the pole upright from a random start by pushing the cart."""

from __future__ import annotations

import torch

from .base import Task


class Cartpole(Task):
    """Balance the bundled ``cartpole`` for 5 s (250 steps at 50 Hz) from a random start.

    Observations (5): cart position, cos and sin of the pole angle, cart and pole velocity.
    Rewards: 1 per step alive, minus small penalties on pole angle, cart offset and speed.
    Terminated when the pole leans past ``max_angle`` or the cart nears the rail's end.
    """

    model = "cartpole"
    camera = "side"
    substeps = 2  # timestep 0.01 s -> control at 50 Hz
    max_episode_length = 250
    max_angle = 0.8  # rad
    max_cart = 1.6  # m (the rail's joint limit is 1.8)

    def initial_state(self, env_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = len(env_ids)
        qpos = torch.stack([self.uniform(-0.5, 0.5, n), self.uniform(-0.4, 0.4, n)], dim=1)
        qvel = self.uniform(-0.3, 0.3, n, 2)
        return qpos, qvel

    def observations(self) -> torch.Tensor:
        angle = self.qpos[:, 1]
        return torch.stack([self.qpos[:, 0], angle.cos(), angle.sin(),
                            self.qvel[:, 0], self.qvel[:, 1]], dim=1)

    def rewards(self) -> dict[str, torch.Tensor]:
        return {
            "alive": torch.ones(self.num_envs, dtype=torch.float64),
            "pole_angle": -0.5 * self.qpos[:, 1].square(),
            "cart_position": -0.05 * self.qpos[:, 0].square(),
            "velocities": -0.005 * self.qvel.square().sum(dim=1),
        }

    def terminated(self) -> torch.Tensor:
        return (self.qpos[:, 1].abs() > self.max_angle) | (self.qpos[:, 0].abs() > self.max_cart)
