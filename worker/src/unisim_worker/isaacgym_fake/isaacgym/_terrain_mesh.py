"""A terrain triangle mesh as a height field fine enough that its vertical faces stay steep.

MuJoCo collides with a mesh's convex hull, so the fake samples the top surface of a mesh
passed to ``add_triangle_mesh`` (terrain: legged_gym's and anymal_terrain's, made by
``convert_heightfield_to_trimesh``) on a grid, and MuJoCo's height field joins neighbouring
samples by straight slopes. ``convert_heightfield_to_trimesh`` makes the faces of steps
steeper than ``slope_threshold`` vertical (PhysX collides with them as walls); at one
sample per vertex spacing each such face would become a slope one spacing wide (a 10 cm
stair riser over 10 cm: 45 degrees). The grid therefore has ``REFINE`` samples per
smallest vertex spacing: the riser spans half of it (63 degrees), the mesh's slopes stay
the same slopes, and a sample on a vertical face (where triangles meet in projection)
takes the face's top. Not finer: MuJoCo makes a contact per height-field prism a shape
touches, and each contact's solver rows take memory in every env's MjData (legged_gym's
anymal: 0.12 MB of arena per env at 2, 0.28 at 4; docs/isaacgym.md, "Terrain at
legged_gym's scale").
"""

import numpy as np

from ._errors import fake_limit

REFINE = 2  # samples per smallest vertex spacing, along x and y
MAX_SAMPLES = 200_000_000  # 800 MB of float32: a larger grid is a mesh the fake cannot hold
CHUNK = 1 << 20  # triangles evaluated at once (bounds the temporaries)
# float32 vertices sit up to ~1e-5 of a spacing off the grid: a grid point that close to
# a triangle's edge counts as on it, on both sides of a vertical face
SLACK = 0.01  # grid units, around a triangle's bounding box
TOLERANCE = 1e-3  # barycentric units


def rasterise(points, faces, refine=REFINE):
    """The top surface of a terrain mesh on a grid: (heights (nx, ny) float32, spacing,
    corner), samples where no triangle lies taking the lowest height."""
    low, high = points[:, 0:2].min(axis=0), points[:, 0:2].max(axis=0)
    # whole cells over the extent: float32 vertices put the spacing off by a few ppm
    cells = np.maximum(np.round((high - low) / _vertex_spacing(points, faces)), 1)
    step = float(np.min((high - low) / cells)) / refine
    shape = np.floor((high - low) / step + 1e-6).astype(np.int64) + 1
    if int(shape[0]) * int(shape[1]) > MAX_SAMPLES:
        raise fake_limit("add_triangle_mesh: the fake samples a terrain mesh on a grid %d times "
                        "finer than its smallest vertex spacing (%g m), %d x %d samples here, "
                        "more than it holds (%d); pass a coarser mesh (terrain_utils' "
                        "horizontal_scale) or a height field (add_heightfield)"
                        % (refine, step * refine, shape[0], shape[1], MAX_SAMPLES))
    heights = np.full(int(shape[0]) * int(shape[1]), -np.inf, dtype=np.float32)
    for begin in range(0, len(faces), CHUNK):
        chunk = faces[begin:begin + CHUNK]
        _chunk(heights, shape, (points[chunk, 0:2] - low) / step, points[chunk, 2])
    if np.isneginf(heights).all():
        raise fake_limit("add_triangle_mesh: no triangle of the mesh faces up or down; the fake "
                        "takes terrain meshes (a surface over the ground plane)")
    heights[np.isneginf(heights)] = heights[~np.isneginf(heights)].min()
    return heights.reshape(shape), (step, step), (float(low[0]), float(low[1]))


def _chunk(heights, shape, corners, z):
    """Raise ``heights`` to the triangles ``corners`` (grid units, (n, 3, 2)) with
    heights ``z`` (n, 3)."""
    first = np.maximum(np.ceil(corners.min(axis=1) - SLACK).astype(np.int64), 0)
    last = np.minimum(np.floor(corners.max(axis=1) + SLACK).astype(np.int64), shape - 1)
    sizes = last - first + 1
    # Triangles of one group have distinct first grid points, so a grid point gets at most
    # one value per group and offset: groups are (rank among the triangles of the same
    # first point, size in x, size in y).
    origin = first[:, 0] * shape[1] + first[:, 1]
    order = np.argsort(origin, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(origin[order])) + 1]
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    span = int(sizes.max()) + 1
    keys = (rank * span + sizes[:, 0]) * span + sizes[:, 1]
    keys[(sizes <= 0).any(axis=1)] = -1  # no grid point under it
    order = np.argsort(keys, kind="stable")
    bounds = np.r_[0, np.flatnonzero(np.diff(keys[order])) + 1, len(order)]
    for begin, end in zip(bounds[:-1], bounds[1:]):
        group = order[begin:end]
        key = int(keys[group[0]])
        if key >= 0:
            _fill(heights, int(shape[1]), corners[group], z[group], first[group],
                  key // span % span, key % span)


def _vertex_spacing(points, faces):
    """The smallest non-zero distance along x or y between two vertices of a triangle."""
    low, high = points[:, 0:2].min(axis=0), points[:, 0:2].max(axis=0)
    smallest = np.inf
    for begin in range(0, len(faces), CHUNK):
        corners = points[faces[begin:begin + CHUNK], 0:2]
        steps = np.abs(corners - np.roll(corners, 1, axis=1))
        steps = steps[steps > 1e-9]
        smallest = min(smallest, float(steps.min())) if len(steps) else smallest
    if not np.isfinite(smallest) or np.any(high - low <= 0):
        raise fake_limit("add_triangle_mesh: the mesh has no extent in x or y; the fake takes "
                        "terrain meshes (a surface over the ground plane)")
    return smallest


def _fill(heights, ny, corners, z, first, size_x, size_y):
    """Raise ``heights`` (flat, ``ny`` per x) to each triangle's height at the grid points
    of its bounding box that lie on it (barycentric coordinates, linear in the offset)."""
    a = corners[:, 0]
    e1, e2 = corners[:, 1] - a, corners[:, 2] - a
    det = e1[:, 0] * e2[:, 1] - e2[:, 0] * e1[:, 1]
    upright = np.abs(det) > 1e-9  # a vertical triangle adds nothing its neighbours lack
    det = np.where(upright, det, 1.0)
    base = first - a  # small numbers from here: float32 holds them to 1e-6
    u0 = ((base[:, 0] * e2[:, 1] - e2[:, 0] * base[:, 1]) / det).astype(np.float32)
    ux, uy = (e2[:, 1] / det).astype(np.float32), (-e2[:, 0] / det).astype(np.float32)
    v0 = ((e1[:, 0] * base[:, 1] - base[:, 0] * e1[:, 1]) / det).astype(np.float32)
    vx, vy = (-e1[:, 1] / det).astype(np.float32), (e1[:, 0] / det).astype(np.float32)
    z = z.astype(np.float32)
    dz1, dz2 = z[:, 1] - z[:, 0], z[:, 2] - z[:, 0]
    index0 = first[:, 0] * ny + first[:, 1]
    tol = TOLERANCE
    for dx in range(size_x):
        for dy in range(size_y):
            u = u0 + dx * ux + dy * uy
            v = v0 + dx * vx + dy * vy
            on = (u >= -tol) & (v >= -tol) & (u + v <= 1 + tol)
            on &= upright
            index = index0[on] + (dx * ny + dy)
            height = z[on, 0] + u[on] * dz1[on] + v[on] * dz2[on]
            heights[index] = np.maximum(heights[index], height)
