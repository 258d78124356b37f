# The gymtorch calls the IsaacGym engine makes; isaacgym-stubs has no gymtorch.
# Signatures from isaacgym/python/isaacgym/gymtorch.py (Preview 4).
import torch

from .gymapi import Tensor

def wrap_tensor(
    gym_tensor: Tensor,
    offsets: tuple[int, ...] | None = ...,
    counts: tuple[int, ...] | None = ...,
) -> torch.Tensor: ...
def unwrap_tensor(torch_tensor: torch.Tensor) -> Tensor: ...
