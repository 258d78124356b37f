"""The fake ``isaacgym.torch_utils``: the quaternion and tensor helpers IsaacGymEnvs and
legged_gym import from the SDK (``from isaacgym.torch_utils import *``), written anew.

Quaternions are xyzw, as everywhere in the SDK; every function takes batches ``(..., 4)``
/ ``(..., 3)`` on any device. Names and parameters are those that code calls.
"""

import numpy as np
import torch


def to_torch(x, dtype=torch.float, device="cuda:0", requires_grad=False):
    return torch.tensor(x, dtype=dtype, device=device, requires_grad=requires_grad)


def normalize(x, eps=1e-9):
    return x / x.norm(p=2, dim=-1).clamp(min=eps, max=None).unsqueeze(-1)


def quat_mul(a, b):
    x1, y1, z1, w1 = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    x2, y2, z2, w2 = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return torch.stack([w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
                        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2], dim=-1)


def quat_conjugate(a):
    return torch.cat([-a[..., :3], a[..., 3:]], dim=-1)


def quat_unit(a):
    return normalize(a)


def quat_apply(a, b):
    """Rotate vectors ``b`` by quaternions ``a``."""
    xyz, w = a[..., :3], a[..., 3:]
    t = 2.0 * torch.cross(xyz, b, dim=-1)
    return b + w * t + torch.cross(xyz, t, dim=-1)


def quat_rotate(q, v):
    return quat_apply(q, v)


def quat_rotate_inverse(q, v):
    return quat_apply(quat_conjugate(q), v)


def quat_from_angle_axis(angle, axis):
    half = (angle / 2.0).unsqueeze(-1)
    return quat_unit(torch.cat([normalize(axis) * half.sin(), half.cos()], dim=-1))


def quat_from_euler_xyz(roll, pitch, yaw):
    """The rotation yaw (z) after pitch (y) after roll (x)."""
    cr, sr = torch.cos(roll * 0.5), torch.sin(roll * 0.5)
    cp, sp = torch.cos(pitch * 0.5), torch.sin(pitch * 0.5)
    cy, sy = torch.cos(yaw * 0.5), torch.sin(yaw * 0.5)
    return torch.stack([sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
                        cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy], dim=-1)


def get_euler_xyz(q):
    """(roll, pitch, yaw) of ``quat_from_euler_xyz``, each in [0, 2 pi)."""
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    roll = torch.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = torch.asin((2.0 * (w * y - z * x)).clamp(-1.0, 1.0))
    yaw = torch.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll % (2 * np.pi), pitch % (2 * np.pi), yaw % (2 * np.pi)


def get_basis_vector(q, v):
    return quat_rotate(q, v)


def normalize_angle(x):
    return torch.atan2(torch.sin(x), torch.cos(x))


def copysign(a, b):
    return torch.abs(torch.full_like(b, a)) * torch.sign(b)


def tensor_clamp(t, min_t, max_t):
    return torch.max(torch.min(t, max_t), min_t)


def scale(x, lower, upper):
    """[-1, 1] to [lower, upper]."""
    return 0.5 * (x + 1.0) * (upper - lower) + lower


def unscale(x, lower, upper):
    """[lower, upper] to [-1, 1]."""
    return (2.0 * x - upper - lower) / (upper - lower)


def torch_rand_float(lower, upper, shape, device):
    return (upper - lower) * torch.rand(*shape, device=device) + lower


def tf_inverse(q, t):
    q_inv = quat_conjugate(q)
    return q_inv, -quat_apply(q_inv, t)


def tf_apply(q, t, v):
    return quat_apply(q, v) + t


def tf_combine(q1, t1, q2, t2):
    return quat_mul(q1, q2), quat_apply(q1, t2) + t1
