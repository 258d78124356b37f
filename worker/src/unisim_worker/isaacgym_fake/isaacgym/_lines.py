"""gymutil's line geometries for the viewer (``draw_lines``): legged_gym draws its height
samples as wireframe spheres, IsaacGymEnvs' BallBalance its sensor frames as axes.

Vertices are ``(num_lines, 2)`` arrays and colours ``(num_lines,)`` arrays of
``gymapi.Vec3.dtype``, posed by ``Transform.transform_points``, as ``Gym.add_lines`` takes
them (SDK docs, "Viewer": add_lines).
"""

import math

import numpy as np

from ._types import Vec3


class LineGeometry:
    """A set of coloured line segments; subclasses fill ``verts`` and ``_colors``."""

    verts = np.zeros((0, 2), Vec3.dtype)
    _colors = np.zeros(0, Vec3.dtype)

    def vertices(self):
        return self.verts

    def colors(self):
        return self._colors

    def num_lines(self):
        return self.vertices().shape[0]

    def instance_verts(self, pose=None):
        """The vertices posed by ``pose`` (a ``Transform``), or a copy of them."""
        verts = self.vertices()
        if pose is None:
            return np.copy(verts)
        return pose.transform_points(verts.reshape(-1)).reshape(verts.shape)

    def _set(self, segments, colors, pose):
        verts = np.zeros((len(segments), 2), Vec3.dtype)
        for k, (start, end) in enumerate(segments):
            verts[k][0], verts[k][1] = tuple(start), tuple(end)
        self.verts = verts
        self.verts = self.instance_verts(pose)
        self._colors = np.array([tuple(c) for c in colors], dtype=Vec3.dtype)


class AxesGeometry(LineGeometry):
    """x, y and z axes of length ``scale``, red, green and blue."""

    def __init__(self, scale=1.0, pose=None):
        axes = np.eye(3) * scale
        self._set([(np.zeros(3), axis) for axis in axes], np.eye(3), pose)


class WireframeBBoxGeometry(LineGeometry):
    """The 12 edges of the box between ``bbox[0]`` (min corner) and ``bbox[1]`` (max)."""

    def __init__(self, bbox, pose=None, color=None):
        bbox = np.asarray(bbox, dtype=np.float64)
        if bbox.shape != (2, 3):
            raise ValueError("Expected bbox to be a matrix of 2 by 3!")
        corners = {(i, j, k): np.array([bbox[i][0], bbox[j][1], bbox[k][2]])
                   for i in (0, 1) for j in (0, 1) for k in (0, 1)}
        edges = [(a, b) for a in corners for b in corners
                 if a < b and sum(x != y for x, y in zip(a, b)) == 1]
        color = (1.0, 0.0, 0.0) if color is None else color
        self._set([(corners[a], corners[b]) for a, b in edges], [color] * len(edges), pose)


class WireframeBoxGeometry(WireframeBBoxGeometry):
    """The edges of an ``xdim`` x ``ydim`` x ``zdim`` box centred on the origin."""

    def __init__(self, xdim=1, ydim=1, zdim=1, pose=None, color=None):
        half = 0.5 * np.array([xdim, ydim, zdim], dtype=np.float64)
        super().__init__(np.stack([-half, half]), pose, color)


class WireframeSphereGeometry(LineGeometry):
    """A sphere of ``radius`` as ``num_lats`` meridians of ``num_lons`` segments, each
    with a segment towards the next meridian (``color`` and ``color2``), y up."""

    def __init__(self, radius=1.0, num_lats=8, num_lons=8, pose=None, color=None,
                 color2=None):
        color = (1.0, 0.0, 0.0) if color is None else color
        color2 = color if color2 is None else color2

        def point(u, v):
            return radius * np.array([math.sin(v) * math.sin(u), math.cos(v),
                                      math.sin(v) * math.cos(u)])

        segments, colors = [], []
        du, dv = 2 * math.pi / num_lats, math.pi / num_lons
        for i in range(num_lats):
            for j in range(num_lons):
                u, v = i * du, j * dv
                segments += [(point(u, v), point(u, v + dv)),
                             (point(u, v + dv), point(u + du, v + dv))]
                colors += [color, color2]
        self._set(segments, colors, pose)


def draw_lines(geom, gym, viewer, env, pose):
    """Add ``geom``'s lines, posed by ``pose`` (in ``env``'s frame; world if None)."""
    gym.add_lines(viewer, env, geom.num_lines(), geom.instance_verts(pose), geom.colors())


def draw_line(p1, p2, color, gym, viewer, env):
    verts = np.zeros((1, 2), Vec3.dtype)
    verts[0][0], verts[0][1] = (p1.x, p1.y, p1.z), (p2.x, p2.y, p2.z)
    colors = np.array([(color.x, color.y, color.z)], dtype=Vec3.dtype)
    gym.add_lines(viewer, env, 1, verts, colors)
