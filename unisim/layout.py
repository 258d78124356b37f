"""What the engine told the host about its scene (the INIT reply), typed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from unisim_protocol import schemas

from .errors import ProtocolError
from .slots import SlotSpec

RESET_MASK = SlotSpec("reset_mask", "|u1", ())


@dataclass(frozen=True)
class Layout:
    engine: str
    engine_version: str
    stepper: str
    num_envs: int
    nq: int
    nv: int
    nu: int
    nbody: int
    timestep: float
    joint_names: tuple[str, ...]
    actuator_names: tuple[str, ...]
    body_names: tuple[str, ...]
    keyframes: tuple[str, ...]
    ctrl_range: tuple[tuple[float, float], ...]
    slots: tuple[SlotSpec, ...]

    @classmethod
    def from_replies(cls, replies: list[dict[str, Any]]) -> Layout:
        """The layout of a pool: every worker must report the same scene (its env count
        and its configuration report are its own)."""
        own = ("num_envs", "report")
        first = {k: v for k, v in replies[0].items() if k not in own}
        for index, reply in enumerate(replies[1:], 1):
            other = {k: v for k, v in reply.items() if k not in own}
            if other != first:
                raise ValueError(f"worker {index} reports a different layout than worker 0")
        return cls.from_reply({**replies[0], "num_envs": sum(r["num_envs"] for r in replies)})

    @classmethod
    def from_reply(cls, reply: dict[str, Any]) -> Layout:
        try:
            schemas.parse_physics_layout(reply)
        except schemas.SchemaError as exc:
            raise ProtocolError(f"the worker's INIT reply is not a layout: {exc}") from None
        slots = tuple(SlotSpec(s["name"], s["dtype"], tuple(s["shape"])) for s in reply["slots"])
        return cls(
            engine=reply["engine"], engine_version=reply["engine_version"],
            stepper=reply["stepper"], num_envs=reply["num_envs"],
            nq=reply["nq"], nv=reply["nv"], nu=reply["nu"], nbody=reply["nbody"],
            timestep=reply["timestep"],
            joint_names=tuple(reply["joint_names"]),
            actuator_names=tuple(reply["actuator_names"]),
            body_names=tuple(reply["body_names"]),
            keyframes=tuple(reply["keyframes"]),
            ctrl_range=tuple((float(lo), float(hi)) for lo, hi in reply["ctrl_range"]),
            slots=(*slots, RESET_MASK),
        )


def merged_report(replies: Sequence[dict[str, Any]], rows: Sequence[range]) -> dict[str, Any]:
    """The engine's configuration report: the worker's own, or with several workers
    ``{"workers": [{"envs": [start, stop], "report": ...}, ...]}`` (one per worker, since
    each read back its own sim)."""
    reports = [reply.get("report", {}) for reply in replies]
    if len(reports) == 1:
        return dict(reports[0])
    return {"workers": [{"envs": [r.start, r.stop], "report": report}
                        for r, report in zip(rows, reports, strict=True)]}
