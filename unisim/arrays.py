"""Host-side array helpers: anything array-like as numpy, torch on demand, and the checks
of env ids and values that every entry point applies once, before anything is sent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import SetupError


def as_numpy(value: Any) -> npt.NDArray[Any]:
    """``value`` as a numpy array; torch tensors on any device are copied to the host."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def import_torch(purpose: str) -> Any:
    """The torch module, or a ``SetupError`` saying that ``purpose`` needs it."""
    try:
        import torch
    except ImportError as exc:
        raise SetupError(f"{purpose} needs torch", hint="pip install torch") from exc
    return torch


def env_rows(env_ids: Any, num_envs: int) -> npt.NDArray[np.int64]:
    """Row indices of ``env_ids``: None (all), ints, or a boolean mask; checked."""
    if env_ids is None:
        return np.arange(num_envs)
    rows = as_numpy(env_ids)
    if rows.dtype == np.bool_:
        if rows.shape != (num_envs,):
            raise ValueError(f"a boolean env mask must have shape ({num_envs},), got {rows.shape}")
        return np.flatnonzero(rows)
    if rows.dtype.kind not in "iu":
        raise TypeError(f"env_ids must be integers or a boolean mask, got dtype {rows.dtype}")
    rows = rows.reshape(-1).astype(np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= num_envs):
        raise IndexError(f"env_ids must lie in [0, {num_envs}), got {rows.min()}..{rows.max()}")
    return rows


def checked_values(value: Any, shape: Sequence[int], name: str) -> npt.NDArray[np.float64]:
    """``value`` as float64 broadcast to ``shape``, refused if not finite."""
    try:
        array = np.broadcast_to(as_numpy(value).astype(np.float64, copy=False), tuple(shape))
    except ValueError:
        raise ValueError(f"{name} must broadcast to shape {tuple(shape)}, "
                         f"got {np.shape(value)}") from None
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return array

