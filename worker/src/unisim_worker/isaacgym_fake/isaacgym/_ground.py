"""The sim's ground: a plane, height fields and triangle meshes, held once for all envs.

The SDK adds them to the sim once (``add_ground``, ``add_heightfield``,
``add_triangle_mesh``). The fake's envs are MuJoCo models of their own, so each holds the
plane and, of each height field, a window around its actors (``_window``), in the env's
frame (world coordinates minus the env origin), colliding with every actor; the samples
themselves are held here, once. A legged_gym terrain is 1,300 x 2,100 samples (2,599 x
4,199 as ``_terrain_mesh`` samples its mesh): a copy in each of 4096 envs took 45 GB.

Height fields: sample ``k`` of the int16 array (C order) is row ``k % nbRows``, column
``k // nbRows`` ("Column-major order", add_heightfield's docstring); the column runs
along x (spacing column_scale) and the row along y (row_scale), so that legged_gym's
``heightsamples[i, j]`` (passed with ``nbRows = tot_cols``) lies at
``(i, j) * horizontal_scale + transform.p``, where its height lookups expect it.
Heights are ``sample * vertical_scale + transform.p.z``.
Triangle meshes are terrain: MuJoCo collides with the convex hull of a mesh, so the fake
samples the mesh's top surface into a height field (``_terrain_mesh``); a mesh is refused
if it has no extent in x or y.
"""

import mujoco
import numpy as np

from ._contacts import GROUND_PREFIX
from ._errors import FakeError, fake_limit, suspect
from ._terrain_mesh import rasterise
from ._window import EXTENT

BASE = 1.0  # depth of a height field's solid base below its lowest sample, m


class Field:
    """One height field: its samples in [0, 1] as MuJoCo's ``hfield_data`` holds them, (ny,
    nx) float32 with rows along y, and where they lie."""

    def __init__(self, heights, spacing, corner, friction):
        self.shape = heights.shape  # (nx, ny)
        self.low = float(heights.min())
        self.range = max(float(heights.max()) - self.low, 1e-6)
        self.data = ((heights - self.low) / self.range).T.astype(np.float32)
        self.spacing, self.corner, self.friction = spacing, corner, friction

    def window(self, extent):
        """Samples (nx, ny) of a window ``extent`` metres wide, at most the whole field."""
        return tuple(min(n, int(np.ceil(extent / d - 1e-9)) + 1)
                     for n, d in zip(self.shape, self.spacing))


class Ground:
    def __init__(self):
        self.plane = None  # (distance, friction)
        self.fields = []  # Field
        self.extent = EXTENT  # new envs' window width, m: grown while envs are built

    def key(self):
        """What an env's model depends on, but for the windows' size."""
        return self.plane, tuple(id(f) for f in self.fields)

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
        heights, spacing, corner = rasterise(points, faces)
        self._add(heights, spacing, params, corner)

    def _add(self, heights, spacing, params, corner=(0.0, 0.0)):
        rotation = params.transform.r
        if not np.allclose([rotation.x, rotation.y, rotation.z], 0.0):
            raise fake_limit("the fake's height fields and terrain meshes take a translation "
                             "only; transform.r must be the identity")
        p = params.transform.p
        self.fields.append(Field(heights + p.z, spacing, (corner[0] + p.x, corner[1] + p.y),
                                 float(params.static_friction)))

    def add_to(self, spec, extent):
        """Add the ground to an env's MjSpec: the plane, and a window ``extent`` metres wide
        of each height field, its samples and place set by the env's ``Window``."""
        if self.plane is not None:
            distance, friction = self.plane
            geom = spec.worldbody.add_geom()
            geom.name, geom.type = GROUND_PREFIX, mujoco.mjtGeom.mjGEOM_PLANE
            geom.size, geom.pos = [0.0, 0.0, 1.0], [0.0, 0.0, -distance]
            _ground_geom(geom, friction)
        for n, field in enumerate(self.fields):
            nx, ny = field.window(extent)
            (dx, dy) = field.spacing
            hfield = spec.add_hfield()
            hfield.name = "__fake_terrain%d" % n
            hfield.nrow, hfield.ncol = ny, nx  # MuJoCo: rows along y, columns along x
            hfield.size = [(nx - 1) * dx / 2, (ny - 1) * dy / 2, field.range, BASE]
            hfield.userdata = [0.0] * (nx * ny)  # MuJoCo needs samples: the env writes them
            geom = spec.worldbody.add_geom()
            geom.type, geom.hfieldname = mujoco.mjtGeom.mjGEOM_HFIELD, hfield.name
            geom.name = "%s_terrain%d" % (GROUND_PREFIX, n)
            _ground_geom(geom, field.friction)


def _ground_geom(geom, friction):
    """A ground shape: it collides with every actor shape through pairs (``_contacts``)."""
    geom.contype = geom.conaffinity = 0
    geom.friction = [friction, 0.005, 0.0001]
    geom.rgba = [0.3, 0.35, 0.4, 1.0]
