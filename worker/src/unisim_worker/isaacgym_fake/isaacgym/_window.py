"""An env's windows onto the sim's height fields: the part around its actors, moved along.

Each env's MjModel holds, of each height field (``_ground.Field``, held once by the sim),
a window of ``extent`` metres square. Before each simulate the window is checked against
the bounding box of the env's actor shapes (their positions and bounding spheres): when a
shape comes within ``GUARD`` of the window's edge (an actor walked, or was reset
elsewhere), the window is moved to centre the box, by whole samples, so that the surface
stays where it is in the world: the env's ``hfield_data`` is rewritten from the field and
its geom moved. A window that is the whole field never moves.

Only this env's model and data are touched, and the fields are read only: envs may
follow in parallel threads.
"""

import mujoco
import numpy as np

from ._contacts import GROUND_PREFIX
from ._native import box

EXTENT = 4.0  # m: the smallest window; an env whose actors need more gets a wider one
GUARD = 0.5  # m: a shape moves less than this in one simulate (100 m/s at legged_gym's dt)
STEP = 1.0  # m: windows grow in steps of this, so that most envs share one model


class Window:
    """The windows of one env's model, one per field of ``ground``."""

    def __init__(self, ground, model, origin):
        self.origin = origin
        self.panes = [_Pane(field, model, n) for n, field in enumerate(ground.fields)]
        self.moving = any(pane.moves.any() for pane in self.panes)
        self.shapes = np.flatnonzero(model.geom_bodyid > 0)  # the actors' shapes

    def follow(self, model, data):
        """Place every window around the actors (their shapes at ``data``'s current state).
        Returns the window extent the actors need if the present one is too small, else
        None."""
        if not self.panes:
            return None
        if self.moving:
            mujoco.mj_kinematics(model, data)  # a reset moved an actor since the last step
        low = high = self.origin[0:2]
        if len(self.shapes):
            bounds = box(data, self.shapes, model.geom_rbound[self.shapes])  # as scaled now
            low, high = bounds[0:2] + self.origin[0:2], bounds[2:4] + self.origin[0:2]
        needed = None
        for pane in self.panes:
            if np.any(pane.moves & (high - low + 2 * GUARD > pane.span)):
                needed = max(needed or 0.0, float(np.max(high - low)) + 2 * GUARD)
            pane.follow(model, data, low, high, self.origin)
        return needed

    def placements(self):
        """Where each window lies (its first sample in the field; None if never placed)."""
        return tuple(None if pane.offset is None else tuple(pane.offset.tolist())
                     for pane in self.panes)

    def interior(self):
        """[low x, low y, high x, high y]: where the actors' box may be, world frame, without
        a window moving (infinite along axes that never move; no box where a window was
        never placed)."""
        bounds = np.array([-np.inf, -np.inf, np.inf, np.inf])
        for pane in self.panes:
            low, high = pane.interior()
            bounds[0:2], bounds[2:4] = np.maximum(bounds[0:2], low), np.minimum(bounds[2:4], high)
        return bounds


class _Pane:
    """One field's window in one env's model: ``size`` samples (nx, ny) from ``offset``."""

    def __init__(self, field, model, n):
        self.field = field
        hfield = model.hfield("__fake_terrain%d" % n).id
        self.geom = model.geom("%s_terrain%d" % (GROUND_PREFIX, n)).id
        model.geom_sameframe[self.geom] = 0  # compiled at the origin: MuJoCo would keep it there
        self.address = int(model.hfield_adr[hfield])
        self.size = np.array([model.hfield_ncol[hfield], model.hfield_nrow[hfield]])
        self.spacing, self.corner = np.asarray(field.spacing), np.asarray(field.corner)
        self.span = (self.size - 1) * self.spacing
        self.moves = self.size < np.asarray(field.shape)  # along x, y: less than the field
        self.offset = None

    def follow(self, model, data, low, high, origin):
        """Keep the box [low, high] (world x, y) ``GUARD`` inside the window."""
        inner_low, inner_high = self.interior()
        if np.all(low >= inner_low) and np.all(high <= inner_high):
            return
        centre = ((low + high) / 2 - self.corner) / self.spacing - (self.size - 1) / 2
        offset = np.clip(np.round(centre), 0, np.asarray(self.field.shape) - self.size)
        if self.offset is None or np.any(offset != self.offset):
            self._place(model, data, offset.astype(np.int64), origin)

    def interior(self):
        """(low, high) world x, y: the box that stays ``GUARD`` inside the window."""
        if self.offset is None:
            return np.full(2, np.inf), np.full(2, -np.inf)
        start = self.corner + self.offset * self.spacing
        return (np.where(self.moves, start + GUARD, -np.inf),
                np.where(self.moves, start + self.span - GUARD, np.inf))

    def _place(self, model, data, offset, origin):
        (i, j), (nx, ny) = offset.tolist(), self.size.tolist()
        (dx, dy), (x0, y0) = self.field.spacing, self.field.corner
        model.hfield_data[self.address:self.address + nx * ny] = \
            self.field.data[j:j + ny, i:i + nx].ravel()
        model.geom_pos[self.geom] = data.geom_xpos[self.geom] = [
            x0 + i * dx + (nx - 1) * dx / 2 - origin[0],
            y0 + j * dy + (ny - 1) * dy / 2 - origin[1], self.field.low - origin[2]]
        self.offset = offset


def grown(extent, needed):
    """The window extent for actors that need ``needed`` metres: whole ``STEP``s, more than
    ``needed`` (so that a rebuilt window never asks again)."""
    return max(extent, float(np.floor(needed / STEP) + 1) * STEP)
