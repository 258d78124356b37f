"""Physics randomisation on the worker: the INIT's ``physics`` spec resolved against a
scene, and the values in effect per env.

The host draws (unisim/physics_draws.py) and writes each env's draws into the ``physics``
slot (and push velocities into ``push``); an engine turns a row of draws into model values
with ``Entry.values`` and applies them. Names are checked here, once, for every engine.
"""

import numpy as np

from unisim_protocol.schemas import slot

PUSH_WIDTH = 6  # a free joint's qvel: linear x, y, z, then angular


def quantities(spec):
    """The quantities ``spec`` asks for, with ``"push"`` for pushes."""
    if not spec:
        return []
    asked = [p["quantity"] for p in spec["parameters"]]
    return asked + (["push"] if spec.get("push") else [])


def refuse_unsupported(spec, supported, engine):
    """Raise, naming them, if ``spec`` asks for quantities the engine cannot randomise."""
    refused = sorted(set(quantities(spec)) - set(supported))
    if refused:
        raise ValueError(
            "the %s engine cannot randomise %s per env (it can: %s); remove %s from the "
            "randomization" % (engine, ", ".join(refused), ", ".join(sorted(supported)) or
                               "nothing", "it" if len(refused) == 1 else "them"))


def slots(spec):
    """The slot declarations the engine adds to its layout for ``spec``."""
    out = []
    if spec and int(spec["columns"]) > 0:
        out.append(slot("physics", "<f8", [int(spec["columns"])]))
    if spec and spec.get("push"):
        out.append(slot("push", "<f8", [PUSH_WIDTH]))
    return out


class Entry:
    """One parameter of the spec, its names resolved to positions in the scene's lists."""

    def __init__(self, wire, positions):
        self.quantity = wire["quantity"]
        self.operation = wire["operation"]
        self.target = wire["target"]
        self.names = list(wire["names"])
        self.label = wire["label"]
        self.column = int(wire["column"])
        self.width = int(wire["width"])
        self.low, self.high = (float(b) for b in wire["bounds"])
        self.positions = positions  # indices into the scene's list of ``target``

    def draws(self, values):
        """This entry's columns of a ``physics`` slot block: (rows, width)."""
        return values[:, self.column:self.column + self.width]

    def values(self, default, draws):
        """Model values (rows, k) from the defaults (k,) and the draws (rows, 1) or, for
        a vector quantity, (rows, k)."""
        if self.operation == "scale":
            return default[None, :] * draws
        if self.operation == "add":
            return default[None, :] + draws
        return np.broadcast_to(draws, (draws.shape[0], default.shape[0])).copy()

    def check_bounds(self, default, minimum, what):
        """Refuse at setup if some draw could take a value below ``minimum``."""
        lowest = self.values(np.asarray(default, dtype=np.float64),
                             np.array([[self.low]])).min(initial=np.inf)
        if lowest < minimum or (minimum == 0.0 and self.quantity == "mass" and lowest <= 0):
            raise ValueError(
                "%s: %s %s of up to %g can make %s %g (the model's values: %s); raise the "
                "distribution's low bound" % (self.label, self.quantity, self.operation,
                                              self.low, what, lowest,
                                              np.round(default, 6).tolist()))


def resolve(spec, scene_names):
    """``Entry``s of ``spec``; ``scene_names`` maps a target (``"bodies"``...) to the
    scene's names of that kind, in the engine's order. An unknown name is an error."""
    entries = []
    for wire in spec["parameters"]:
        target = wire["target"]
        positions = []
        if target is not None:
            known = scene_names[target]
            for name in wire["names"]:
                if name not in known:
                    raise ValueError(
                        "%s: the model has no %s %r; its %s: %s" % (
                            wire["label"], target[:-1] if target != "bodies" else "body",
                            name, target, ", ".join(n for n in known if n) or "none"))
                positions.append(known.index(name))
        entries.append(Entry(wire, np.asarray(positions, dtype=np.int64)))
    return entries
