"""The fake ``isaacgym.torch_utils``: the quaternion and tensor helpers IsaacGymEnvs and
legged_gym import from the SDK (``from isaacgym.torch_utils import *``), written anew.

Quaternions are xyzw, as everywhere in the SDK; every function takes batches ``(..., 4)``
/ ``(..., 3)`` on any device. Names and parameters are those that code calls. As in the
SDK, the tensor functions are TorchScript functions: a task's own ``@torch.jit.script``
functions call them, and arguments of the wrong type (a ``torch.device`` for ``device``)
fail as they fail there.
"""

import math
from typing import Tuple

import numpy as np
import torch


def to_torch(x, dtype=torch.float, device="cuda:0", requires_grad=False):
    return torch.tensor(x, dtype=dtype, device=device, requires_grad=requires_grad)


@torch.jit.script
def normalize(x, eps: float = 1e-9):
    return x / x.norm(p=2, dim=-1).clamp(min=eps, max=None).unsqueeze(-1)


@torch.jit.script
def quat_mul(a, b):
    x1, y1, z1, w1 = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    x2, y2, z2, w2 = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return torch.stack([w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
                        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2], dim=-1)


@torch.jit.script
def quat_conjugate(a):
    return torch.cat([-a[..., :3], a[..., 3:]], dim=-1)


@torch.jit.script
def quat_unit(a):
    return normalize(a)


@torch.jit.script
def quat_apply(a, b):
    """Rotate vectors ``b`` by quaternions ``a``, row by row of both flattened: the result
    has ``b``'s shape (legged_gym's ``quat_apply_yaw`` passes (N * P, 4) and (N, P, 3))."""
    shape = b.shape
    a, b = a.reshape(-1, 4), b.reshape(-1, 3)
    xyz, w = a[:, :3], a[:, 3:]
    t = 2.0 * torch.cross(xyz, b, dim=-1)
    return (b + w * t + torch.cross(xyz, t, dim=-1)).view(shape)


@torch.jit.script
def quat_rotate(q, v):
    return quat_apply(q, v)


@torch.jit.script
def quat_rotate_inverse(q, v):
    return quat_apply(quat_conjugate(q), v)


@torch.jit.script
def quat_from_angle_axis(angle, axis):
    half = (angle / 2.0).unsqueeze(-1)
    return quat_unit(torch.cat([normalize(axis) * half.sin(), half.cos()], dim=-1))


@torch.jit.script
def quat_from_euler_xyz(roll, pitch, yaw):
    """The rotation yaw (z) after pitch (y) after roll (x)."""
    cr, sr = torch.cos(roll * 0.5), torch.sin(roll * 0.5)
    cp, sp = torch.cos(pitch * 0.5), torch.sin(pitch * 0.5)
    cy, sy = torch.cos(yaw * 0.5), torch.sin(yaw * 0.5)
    return torch.stack([sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
                        cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy], dim=-1)


@torch.jit.script
def get_euler_xyz(q):
    """(roll, pitch, yaw) of ``quat_from_euler_xyz``, each in [0, 2 pi)."""
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    roll = torch.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = torch.asin((2.0 * (w * y - z * x)).clamp(-1.0, 1.0))
    yaw = torch.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll % (2 * math.pi), pitch % (2 * math.pi), yaw % (2 * math.pi)


@torch.jit.script
def get_basis_vector(q, v):
    return quat_rotate(q, v)


@torch.jit.script
def normalize_angle(x):
    return torch.atan2(torch.sin(x), torch.cos(x))


@torch.jit.script
def copysign(a: float, b):
    return torch.abs(torch.full_like(b, a)) * torch.sign(b)


@torch.jit.script
def tensor_clamp(t, min_t, max_t):
    return torch.max(torch.min(t, max_t), min_t)


@torch.jit.script
def scale(x, lower, upper):
    """[-1, 1] to [lower, upper]."""
    return 0.5 * (x + 1.0) * (upper - lower) + lower


@torch.jit.script
def unscale(x, lower, upper):
    """[lower, upper] to [-1, 1]."""
    return (2.0 * x - upper - lower) / (upper - lower)


def unscale_np(x, lower, upper):
    return (2.0 * x - upper - lower) / (upper - lower)


@torch.jit.script
def torch_rand_float(lower: float, upper: float, shape: Tuple[int, int], device: str):
    return (upper - lower) * torch.rand(shape, device=device) + lower


@torch.jit.script
def torch_random_dir_2(shape: Tuple[int, int], device: str):
    """Unit 2D vectors of uniformly random direction, ``shape[:-1] + (2,)``."""
    angle = torch_rand_float(-math.pi, math.pi, shape, device).squeeze(-1)
    return torch.stack([torch.cos(angle), torch.sin(angle)], dim=-1)


@torch.jit.script
def tf_inverse(q, t):
    q_inv = quat_conjugate(q)
    return q_inv, -quat_apply(q_inv, t)


@torch.jit.script
def tf_apply(q, t, v):
    return quat_apply(q, v) + t


@torch.jit.script
def tf_vector(q, v):
    return quat_apply(q, v)


@torch.jit.script
def tf_combine(q1, t1, q2, t2):
    return quat_mul(q1, q2), quat_apply(q1, t2) + t1


def get_axis_params(value, axis_idx, x_value=0.0, dtype=np.float64, n_dims=3):
    """A ``n_dims`` list with ``value`` at ``axis_idx``, ``x_value`` first: arguments for
    ``gymapi.Vec3`` (IsaacGymEnvs' up and gravity vectors)."""
    if not -n_dims <= axis_idx < n_dims:  # the SDK asserts axis_idx < n_dims
        raise ValueError("axis_idx %r is not an axis of %d dimensions" % (axis_idx, n_dims))
    params = np.zeros(n_dims)
    params[axis_idx] = value
    params[0] = x_value
    return list(params.astype(dtype))
