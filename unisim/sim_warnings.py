"""Non-finite controls and the engine's per-env warnings: checked, flagged, logged.

MuJoCo does not raise on bad numbers: given a NaN or infinite control it zeroes that
env's controls for the step, and on a diverging state (bad qpos/qvel/qacc) it resets that
env, counting a warning in its ``MjData`` that no one reads. The MuJoCo engine copies those
counters into a per-env bitmask slot after every step (``Backend.warnings``, bit k named
``Backend.warning_names[k]``); this module reads it on the host and applies the backend's
``nan_policy``:

* ``"warn"`` (default): step as MuJoCo in-process would, flag the envs, log a warning that
  names them. One bad env among thousands does not stop a training run, and nothing is
  silent.
* ``"raise"``: check the controls on the host before the step; any NaN or inf raises a
  ``ValueError`` naming the envs, and nothing is stepped. (Warnings the engine raises for
  other reasons are still flagged and logged.)
* ``"reset"``: as ``"warn"``, then reset each env with a numerical warning (bad ctrl,
  qpos, qvel or qacc) to its initial state, so its rows hold a clean start.

Engines without the slot (mock, MJX, IsaacGym) report no warnings: there, only
``"raise"`` checks anything.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import numpy.typing as npt

POLICIES = ("raise", "warn", "reset")
NUMERICAL = ("badqpos", "badqvel", "badqacc", "badctrl")  # what "reset" resets
LOG_EVERY = 1.0  # s: a warning that repeats step after step is logged at most this often
SHOWN = 8  # env ids named in one message

log = logging.getLogger("unisim")


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"nan_policy must be one of {POLICIES}, got {policy!r}")
    return policy


def env_list(ids: npt.NDArray[Any]) -> str:
    shown = ", ".join(str(int(i)) for i in ids[:SHOWN])
    more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
    return f"env{'s' if len(ids) > 1 else ''} {shown}{more}"


class WarningMonitor:
    """One backend's policy, flags view and warning names, fixed at construction.

    A step reads ``clean`` and ``ctrl_check`` itself (``stepping.Stepping``) and calls in here
    only when there is something to do."""

    def __init__(self, policy: str, flags: npt.NDArray[np.uint8] | None,
                 names: list[str] | tuple[str, ...], num_envs: int) -> None:
        self.policy = check_policy(policy)
        self.names = tuple(names)
        # The flags' bytes after a step without warnings (None: the engine reports none).
        # A bytes comparison beats np.count_nonzero at every N
        # (benchmarks/latency/warnings_cost.py).
        self.clean: bytes | None = None
        if flags is None:  # a read-only row of zeros
            flags = np.zeros(num_envs, np.uint8)
            flags.flags.writeable = False
        else:
            self.clean = bytes(flags.nbytes)
        self.flags = flags
        numerical = [1 << k for k, name in enumerate(self.names) if name in NUMERICAL]
        self._numerical = np.uint8(sum(numerical))
        self._last: tuple[float, str] = (0.0, "")
        # What checks a step's ctrl before it is sent: only "raise" checks on the host.
        self.ctrl_check = self.refuse_nonfinite if self.policy == "raise" else None

    def refuse_nonfinite(self, ctrl: Any) -> None:
        """A ``ValueError`` naming the envs whose ctrl is not finite (``"raise"``)."""
        finite = np.isfinite(ctrl) if isinstance(ctrl, np.ndarray) else _torch_finite(ctrl)
        if finite.all():
            return
        bad = np.flatnonzero(~finite.reshape(len(finite), -1).all(axis=1))
        raise ValueError(f"ctrl is NaN or infinite in {env_list(bad)}; nothing was stepped "
                         "(nan_policy='raise'; 'warn' would step and flag them)")

    def after_step(self) -> npt.NDArray[np.int64] | None:
        """Log the flagged envs; return those to reset under ``"reset"`` (else None)."""
        if self.clean is None or self.flags.tobytes() == self.clean:
            return None
        flagged = np.flatnonzero(self.flags)
        self._log(flagged)
        if self.policy != "reset":
            return None
        ids = np.flatnonzero(self.flags & self._numerical)
        return ids if len(ids) else None

    def describe(self, bits: int) -> str:
        return "+".join(name for k, name in enumerate(self.names) if bits >> k & 1)

    def _log(self, flagged: npt.NDArray[np.int64]) -> None:
        kinds = sorted({self.describe(int(b)) for b in self.flags[flagged]})
        message = f"{', '.join(kinds)} in {env_list(flagged)}"
        now = time.monotonic()
        if message == self._last[1] and now - self._last[0] < LOG_EVERY:
            return
        self._last = (now, message)
        action = {"warn": "stepped as MuJoCo does (bad ctrl: zeroed for the step; bad state: "
                          "reset by MuJoCo)",
                  "raise": "stepped as MuJoCo does",
                  "reset": "reset to their initial state"}[self.policy]
        log.warning("simulation warning: %s; %s; flags in sim.warnings (nan_policy=%r)",
                    message, action, self.policy)


def _torch_finite(tensor: Any) -> npt.NDArray[np.bool_]:
    import torch

    return torch.isfinite(tensor).cpu().numpy()  # type: ignore[no-any-return]
