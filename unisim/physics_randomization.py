"""Physics domain randomisation, in the product's terms: what to draw, from what, when.

A ``PhysicsRandomization`` lists ``Parameter``s (friction, mass, DOF damping, stiffness
and armature, actuator gain, gravity), each addressed by names from the model and drawn
per env from a distribution, plus an optional ``Push`` (root-velocity impulses). Give it
to ``Backend(randomization=...)`` or to a task. Everything here is checked when it is
built, before any worker starts; names are checked against the model by the worker at
INIT, which also refuses any quantity its engine cannot randomise.

Each parameter draws **one value per env**, applied to every element it names (list a
parameter per element for independent draws); gravity draws three (x, y, z). Operations:
``scale`` multiplies the model's value, ``add`` adds to it, ``set`` replaces it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

OPERATIONS = ("scale", "add", "set")
# quantity -> the kind of model element it names (None: the whole model)
TARGETS: dict[str, tuple[str, ...]] = {
    "friction": ("geoms", "bodies"),
    "mass": ("bodies",),
    "damping": ("joints",),
    "stiffness": ("joints",),
    "armature": ("joints",),
    "gain": ("actuators",),
    "gravity": (),
}
NONNEGATIVE = ("friction", "mass", "damping", "stiffness", "armature")
PUSH_AXES = ("x", "y", "z", "roll", "pitch", "yaw")  # a free joint's qvel, in that order


@dataclass(frozen=True)
class Uniform:
    """Uniform on ``[low, high]``."""

    low: float
    high: float

    def bounds(self) -> tuple[float, float]:
        return _ordered(self.low, self.high, "Uniform")


@dataclass(frozen=True)
class LogUniform:
    """``exp`` of a uniform on ``[log low, log high]``: equal odds for each factor of 2."""

    low: float
    high: float

    def bounds(self) -> tuple[float, float]:
        low, high = _ordered(self.low, self.high, "LogUniform")
        if low <= 0:
            raise ValueError(f"LogUniform needs 0 < low, got low={low}")
        return low, high


@dataclass(frozen=True)
class Gaussian:
    """Normal with ``mean`` and ``std``, clipped to ``[low, high]``."""

    mean: float
    std: float
    low: float = -math.inf
    high: float = math.inf

    def bounds(self) -> tuple[float, float]:
        if not (math.isfinite(self.mean) and math.isfinite(self.std)) or self.std < 0:
            raise ValueError(f"Gaussian needs a finite mean and std >= 0, got mean={self.mean}, "
                             f"std={self.std}")
        return _ordered(self.low, self.high, "Gaussian", finite=False)


Distribution = Uniform | LogUniform | Gaussian
KINDS = {Uniform: "uniform", LogUniform: "log_uniform", Gaussian: "gaussian"}


@dataclass(frozen=True)
class Parameter:
    """One physical quantity of the named elements, drawn per env from ``distribution``."""

    quantity: str
    distribution: Distribution
    operation: str = "scale"
    names: tuple[str, ...] = ()
    target: str | None = None  # "geoms" | "bodies" | "joints" | "actuators"; None: gravity
    label: str = ""  # its key in ``Backend.physics_parameters()``; default quantity:names

    def __post_init__(self) -> None:
        if self.quantity not in TARGETS:
            raise ValueError(f"unknown quantity {self.quantity!r}; choose one of "
                             f"{', '.join(TARGETS)}")
        if self.operation not in OPERATIONS:
            raise ValueError(f"{self.quantity}: operation must be one of {OPERATIONS}, "
                             f"got {self.operation!r}")
        if not isinstance(self.distribution, Uniform | LogUniform | Gaussian):
            raise TypeError(f"{self.quantity}: distribution must be Uniform, LogUniform or "
                            f"Gaussian, got {self.distribution!r}")
        object.__setattr__(self, "names", tuple(self.names))
        targets = TARGETS[self.quantity]
        if targets:
            if self.target not in targets:
                raise ValueError(f"{self.quantity} names {' or '.join(targets)}, "
                                 f"got target={self.target!r}")
            if not self.names or not all(isinstance(n, str) and n for n in self.names):
                raise ValueError(f"{self.quantity}: name at least one of the model's "
                                 f"{self.target} (non-empty strings), got {self.names!r}")
        elif self.names or self.target is not None:
            raise ValueError(f"{self.quantity} applies to the whole model; it takes no names")
        self._check_values()
        if not self.label:
            object.__setattr__(self, "label", ":".join((self.quantity, *self.names)))

    @property
    def width(self) -> int:
        """Values drawn per env: three for gravity (x, y, z), else one."""
        return 3 if self.quantity == "gravity" else 1

    def _check_values(self) -> None:
        """Refuse what could make a quantity negative (or a mass zero) from the draw alone;
        an ``add`` is checked against the model's values by the worker."""
        low = self.distribution.bounds()[0]
        what = f"{self.quantity} {self.operation} {self.distribution}"
        if self.operation == "scale" and low < 0:
            raise ValueError(f"{what}: a scale factor must be >= 0 (give the distribution "
                             "low >= 0)")
        if self.operation == "set" and self.quantity in NONNEGATIVE and (
                low < 0 or (self.quantity == "mass" and low <= 0)):
            sign = "positive" if self.quantity == "mass" else ">= 0"
            raise ValueError(f"{what}: a {self.quantity} must be {sign} (give the "
                             "distribution a low bound that is)")
        if self.quantity == "mass" and self.operation == "scale" and low <= 0:
            raise ValueError(f"{what}: a mass scale factor must be positive")

    def to_wire(self, column: int) -> dict[str, Any]:
        low, high = self.distribution.bounds()
        return {"quantity": self.quantity, "operation": self.operation,
                "target": self.target, "names": list(self.names), "label": self.label,
                "column": column, "width": self.width, "bounds": [low, high]}


def friction(distribution: Distribution, *, geoms: Iterable[str] = (),
             bodies: Iterable[str] = (), operation: str = "scale", label: str = "") -> Parameter:
    """Sliding friction of ``geoms``, or of every geom of ``bodies`` (give one of them)."""
    geoms, bodies = tuple(geoms), tuple(bodies)
    if bool(geoms) == bool(bodies):
        raise ValueError("friction: name geoms= or bodies= (one of them)")
    target = "geoms" if geoms else "bodies"
    return Parameter("friction", distribution, operation, geoms or bodies, target, label)


def mass(distribution: Distribution, *, bodies: Iterable[str], operation: str = "scale",
         label: str = "") -> Parameter:
    """Mass of ``bodies``; their inertia follows (same shape, denser or lighter)."""
    return Parameter("mass", distribution, operation, tuple(bodies), "bodies", label)


def damping(distribution: Distribution, *, joints: Iterable[str], operation: str = "scale",
            label: str = "") -> Parameter:
    return Parameter("damping", distribution, operation, tuple(joints), "joints", label)


def stiffness(distribution: Distribution, *, joints: Iterable[str], operation: str = "scale",
              label: str = "") -> Parameter:
    return Parameter("stiffness", distribution, operation, tuple(joints), "joints", label)


def armature(distribution: Distribution, *, joints: Iterable[str], operation: str = "scale",
             label: str = "") -> Parameter:
    return Parameter("armature", distribution, operation, tuple(joints), "joints", label)


def gain(distribution: Distribution, *, actuators: Iterable[str], operation: str = "scale",
         label: str = "") -> Parameter:
    """Actuator gain: a position servo's kp (its bias follows), a motor's gear gain."""
    return Parameter("gain", distribution, operation, tuple(actuators), "actuators", label)


def gravity(distribution: Distribution, *, operation: str = "add",
            label: str = "") -> Parameter:
    """Gravity's x, y and z, each drawn from ``distribution``."""
    return Parameter("gravity", distribution, operation, (), None, label)


@dataclass(frozen=True)
class Push:
    """Root-velocity impulses: ``velocity`` added to each of ``axes`` of the model's free
    joint, every ``interval`` backend steps (None: only when ``Backend.push`` is called)."""

    velocity: Distribution
    axes: tuple[str, ...] = ("x", "y")
    interval: int | None = None

    def __post_init__(self) -> None:
        self.velocity.bounds()
        object.__setattr__(self, "axes", tuple(self.axes))
        unknown = [a for a in self.axes if a not in PUSH_AXES]
        if not self.axes or unknown or len(set(self.axes)) != len(self.axes):
            raise ValueError(f"push axes must be distinct names from {PUSH_AXES}, "
                             f"got {self.axes!r}")
        if self.interval is not None and (isinstance(self.interval, bool)
                                          or not isinstance(self.interval, int)
                                          or self.interval < 1):
            raise ValueError(f"push interval must be a positive number of steps or None, "
                             f"got {self.interval!r}")


@dataclass(frozen=True)
class PhysicsRandomization:
    """What to randomise, seeded; ``on_reset``: draw again for every env that is reset
    (else only at start and on ``Backend.randomize``)."""

    parameters: tuple[Parameter, ...] = ()
    push: Push | None = None
    seed: int = 0
    on_reset: bool = True
    columns: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", tuple(self.parameters))
        if not all(isinstance(p, Parameter) for p in self.parameters):
            raise TypeError("parameters must be Parameter objects (made by friction(), "
                            "mass()... of unisim.physics_randomization)")
        if self.push is not None and not isinstance(self.push, Push):
            raise TypeError(f"push must be a Push or None, got {self.push!r}")
        if not self.parameters and self.push is None:
            raise ValueError("nothing to randomise: give parameters or a push")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an int >= 0, got {self.seed!r}")
        labels = [p.label for p in self.parameters]
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates:
            raise ValueError(f"parameter labels must be distinct; repeated: {duplicates} "
                             "(give label=)")
        object.__setattr__(self, "columns", sum(p.width for p in self.parameters))

    def column_of(self) -> list[int]:
        """The first slot column of each parameter."""
        starts, column = [], 0
        for parameter in self.parameters:
            starts.append(column)
            column += parameter.width
        return starts

    def to_wire(self) -> dict[str, Any]:
        """The INIT payload's ``physics`` entry (protocol/PROTOCOL.md)."""
        return {"parameters": [p.to_wire(c) for p, c in
                               zip(self.parameters, self.column_of(), strict=True)],
                "columns": self.columns,
                "push": None if self.push is None else list(self.push.axes)}


def _ordered(low: float, high: float, name: str, finite: bool = True) -> tuple[float, float]:
    low, high = float(low), float(high)
    if math.isnan(low) or math.isnan(high) or (finite and not (math.isfinite(low)
                                                               and math.isfinite(high))):
        raise ValueError(f"{name} bounds must be finite numbers, got low={low}, high={high}")
    if low > high:
        raise ValueError(f"{name} has low > high ({low} > {high}); swap them")
    return low, high
