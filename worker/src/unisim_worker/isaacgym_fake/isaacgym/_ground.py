"""The sim's ground: a plane, height fields and triangle meshes, in every env's model.

The SDK adds them to the sim once (``add_ground``, ``add_heightfield``,
``add_triangle_mesh``); the fake puts a copy into each env's MuJoCo model, in the env's
frame (world coordinates minus the env origin), colliding with every actor.

Height fields: sample ``k`` of the int16 array (C order) is row ``k % nbRows``, column
``k // nbRows`` ("Column-major order", add_heightfield's docstring); the column runs
along x (spacing column_scale) and the row along y (row_scale), so that legged_gym's
``heightsamples[i, j]`` (passed with ``nbRows = tot_cols``) lies at
``(i, j) * horizontal_scale + transform.p``, where its height lookups expect it.
Heights are ``sample * vertical_scale + transform.p.z``.
Triangle meshes are terrain: MuJoCo collides with the convex hull of a mesh, so the fake
samples the mesh's top surface into a height field (one sample per smallest vertex
spacing) instead; a mesh is refused if it has no extent in x or y.
"""

import mujoco
import numpy as np

from ._contacts import GROUND_PREFIX
from ._errors import FakeError, fake_limit, suspect

BASE = 1.0  # depth of a height field's solid base below its lowest sample, m


class Ground:
    def __init__(self):
        self.plane = None  # (distance, friction)
        self.fields = []  # (heights (nx, ny) float64 m, spacing (dx, dy), corner (x, y), friction)

    def key(self, origin):
        """What an env's model depends on: the ground, and where the env is on it."""
        fields = tuple(id(f[0]) for f in self.fields)
        return self.plane, fields, tuple(origin.tolist()) if fields else None

    def set_plane(self, distance, friction):
        self.plane = (float(distance), float(friction))

    def add_heightfield(self, samples, params):
        rows, columns = int(params.nbRows), int(params.nbColumns)
        samples = np.asarray(samples).reshape(-1)
        if samples.dtype != np.int16:  # numpy.ndarray[int16]: pybind11 casts (forcecast)
            cast = samples.astype(np.int16)
            if not np.array_equal(cast, samples):
                suspect(("heightfield", "dtype"), "add_heightfield: %s height samples that "
                        "int16 does not hold (the SDK casts them, as the fake does): pass "
                        "integer samples in vertical_scale units" % samples.dtype)
            samples = cast
        if samples.size < rows * columns:
            raise FakeError("add_heightfield: %d samples for nbRows=%d x nbColumns=%d; the SDK "
                            "would read past the array" % (samples.size, rows, columns))
        if rows < 2 or columns < 2:
            raise fake_limit("add_heightfield: nbRows=%d x nbColumns=%d; the fake's height "
                             "fields need at least 2 x 2 samples" % (rows, columns))
        heights = samples[:rows * columns].astype(np.float64).reshape(columns, rows)
        self._add(heights * float(params.vertical_scale),
                  (float(params.column_scale), float(params.row_scale)), params)

    def add_triangle_mesh(self, vertices, triangles, params):
        vertices = np.asarray(vertices, dtype=np.float64).reshape(-1)
        triangles = np.asarray(triangles).reshape(-1)
        nv, nt = int(params.nb_vertices), int(params.nb_triangles)
        if vertices.size < 3 * nv or triangles.size < 3 * nt:
            raise FakeError("add_triangle_mesh: %d vertex floats and %d triangle indices for "
                            "nb_vertices=%d, nb_triangles=%d (3 each expected); the SDK would "
                            "read past the arrays" % (vertices.size, triangles.size, nv, nt))
        if nt < 1:
            raise fake_limit("add_triangle_mesh: a mesh without triangles; the fake takes "
                             "terrain meshes (a surface over the ground plane)")
        points = vertices[:3 * nv].reshape(nv, 3)
        faces = triangles[:3 * nt].reshape(nt, 3).astype(np.int64)
        if faces.min() < 0 or faces.max() >= nv:
            raise FakeError("add_triangle_mesh: triangle indices outside [0, %d); the SDK "
                            "would read past the vertices" % nv)
        heights, spacing, corner = _rasterise(points, faces)
        self._add(heights, spacing, params, corner)

    def _add(self, heights, spacing, params, corner=(0.0, 0.0)):
        rotation = params.transform.r
        if not np.allclose([rotation.x, rotation.y, rotation.z], 0.0):
            raise fake_limit("the fake's height fields and terrain meshes take a translation "
                             "only; transform.r must be the identity")
        p = params.transform.p
        self.fields.append((heights + p.z, spacing, (corner[0] + p.x, corner[1] + p.y),
                            float(params.static_friction)))

    def add_to(self, spec, origin):
        """Add the ground to an env's MjSpec, in the frame of the env at ``origin``."""
        if self.plane is not None:
            distance, friction = self.plane
            geom = spec.worldbody.add_geom()
            geom.name, geom.type = GROUND_PREFIX, mujoco.mjtGeom.mjGEOM_PLANE
            geom.size, geom.pos = [0.0, 0.0, 1.0], [0.0, 0.0, -distance]
            _ground_geom(geom, friction)
        for n, (heights, (dx, dy), (x0, y0), friction) in enumerate(self.fields):
            nx, ny = heights.shape
            low, high = float(heights.min()), float(heights.max())
            field = spec.add_hfield()
            field.name = "__fake_terrain%d" % n
            field.nrow, field.ncol = ny, nx  # MuJoCo: rows along y, columns along x
            field.size = [(nx - 1) * dx / 2, (ny - 1) * dy / 2, max(high - low, 1e-6), BASE]
            field.userdata = ((heights - low) / max(high - low, 1e-6)).T.reshape(-1).tolist()
            geom = spec.worldbody.add_geom()
            geom.type, geom.hfieldname = mujoco.mjtGeom.mjGEOM_HFIELD, field.name
            geom.name = "%s_terrain%d" % (GROUND_PREFIX, n)
            geom.pos = [x0 + (nx - 1) * dx / 2 - origin[0], y0 + (ny - 1) * dy / 2 - origin[1],
                        low - origin[2]]
            _ground_geom(geom, friction)


def _ground_geom(geom, friction):
    """A ground shape: it collides with every actor shape through pairs (``_contacts``)."""
    geom.contype = geom.conaffinity = 0
    geom.friction = [friction, 0.005, 0.0001]
    geom.rgba = [0.3, 0.35, 0.4, 1.0]


def _rasterise(points, faces):
    """The top surface of a terrain mesh as heights on a grid: (heights (nx, ny), spacing,
    corner)."""
    edges = np.concatenate([points[faces[:, a]] - points[faces[:, b]]
                            for a, b in ((0, 1), (1, 2), (2, 0))])
    steps = np.abs(edges[:, 0:2])
    step = float(np.min(steps[steps > 1e-9])) if np.any(steps > 1e-9) else 0.0
    low, high = points[:, 0:2].min(axis=0), points[:, 0:2].max(axis=0)
    if step <= 0 or np.any(high - low <= 0):
        raise fake_limit("add_triangle_mesh: the mesh has no extent in x or y; the fake takes "
                         "terrain meshes (a surface over the ground plane)")
    shape = np.floor((high - low) / step + 1e-6).astype(int) + 1
    heights = np.full(shape, -np.inf)
    corners = points[faces]  # (nt, 3, 3)
    lo = np.floor((corners[:, :, 0:2].min(axis=1) - low) / step - 1e-6).astype(int)
    hi = np.ceil((corners[:, :, 0:2].max(axis=1) - low) / step + 1e-6).astype(int)
    span = int(np.max(hi - lo)) + 1
    for di in range(span):
        for dj in range(span):
            i, j = lo[:, 0] + di, lo[:, 1] + dj
            inside = (i <= hi[:, 0]) & (j <= hi[:, 1]) & (i >= 0) & (j >= 0) \
                & (i < shape[0]) & (j < shape[1])
            point = low + np.stack([i, j], axis=1) * step
            z, hit = _barycentric_height(corners, point)
            keep = inside & hit
            np.maximum.at(heights, (i[keep], j[keep]), z[keep])
    if np.isneginf(heights).any():
        heights[np.isneginf(heights)] = np.min(heights[~np.isneginf(heights)])
    return heights, (step, step), (float(low[0]), float(low[1]))


def _barycentric_height(corners, point):
    """Height of each triangle above ``point`` (one point per triangle), and whether the
    point is inside the triangle's projection."""
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    v0, v1, v2 = b[:, 0:2] - a[:, 0:2], c[:, 0:2] - a[:, 0:2], point - a[:, 0:2]
    det = v0[:, 0] * v1[:, 1] - v1[:, 0] * v0[:, 1]
    flat = np.abs(det) < 1e-12
    safe = np.where(flat, 1.0, det)
    u = (v2[:, 0] * v1[:, 1] - v1[:, 0] * v2[:, 1]) / safe
    v = (v0[:, 0] * v2[:, 1] - v2[:, 0] * v0[:, 1]) / safe
    tol = 1e-6
    hit = ~flat & (u >= -tol) & (v >= -tol) & (u + v <= 1 + tol)
    return a[:, 2] + u * (b[:, 2] - a[:, 2]) + v * (c[:, 2] - a[:, 2]), hit
