"""A trained MLP policy as plain arrays: the demo's walker runs without torch or rsl_rl.

The file is a ``.npz`` (loaded with ``allow_pickle=False``: no code in it) exported from an
rsl_rl ``MLPModel`` by ``export``: the observation normaliser (``obs_mean``, ``obs_std``,
``obs_eps``) and the layers ``w0, b0, w1, b1, ...``, ELU between them; the output is the
Gaussian's mean, the action a deterministic evaluation takes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]


class MlpPolicy:
    """``policy(observations) -> actions`` for a ``(num_envs, num_observations)`` batch."""

    def __init__(self, path: str | Path) -> None:
        with np.load(path, allow_pickle=False) as saved:
            arrays = {key: saved[key].astype(np.float64) for key in saved.files}
        self.path = Path(path)
        self.mean, self.std = arrays["obs_mean"], arrays["obs_std"]
        self.eps = float(arrays["obs_eps"])
        count = sum(1 for key in arrays if key.startswith("w"))
        self.layers = [(arrays[f"w{i}"], arrays[f"b{i}"]) for i in range(count)]
        self.num_observations = self.layers[0][0].shape[1]
        self.num_actions = self.layers[-1][0].shape[0]

    def __call__(self, observations: Any) -> Array:
        x = (np.asarray(observations, dtype=np.float64) - self.mean) / (self.std + self.eps)
        for i, (weight, bias) in enumerate(self.layers):
            x = x @ weight.T + bias
            if i < len(self.layers) - 1:
                x = np.where(x > 0, x, np.expm1(np.minimum(x, 0.0)))  # ELU
        actions: Array = x
        return actions


def export(model: Any, path: str | Path) -> Path:
    """Write an rsl_rl ``MLPModel`` (ELU, normalised observations) as ``path`` (.npz)."""
    state = {key: value.detach().cpu().numpy() for key, value in model.state_dict().items()}
    linear = sorted({key.rsplit(".", 1)[0] for key in state
                     if key.startswith("mlp.") and key.endswith(".weight")},
                    key=lambda name: int(name.split(".")[1]))
    arrays: dict[str, Any] = {
        "obs_mean": state["obs_normalizer._mean"].reshape(-1),
        "obs_std": state["obs_normalizer._std"].reshape(-1),
        "obs_eps": np.float64(model.obs_normalizer.eps),
    }
    for i, name in enumerate(linear):
        arrays[f"w{i}"] = state[f"{name}.weight"].astype(np.float32)
        arrays[f"b{i}"] = state[f"{name}.bias"].astype(np.float32)
    path = Path(path)
    np.savez_compressed(path, **arrays)
    return path
