"""The fake ``isaacgym.terrain_utils``: height-field terrains and their triangle meshes, as
legged_gym's ``Terrain`` and IsaacGymEnvs' ``anymal_terrain`` call them, written anew with
numpy from the documented API (IsaacGym docs, "Terrains"; the SDK's docstrings).

A ``SubTerrain`` holds ``height_field_raw``, an int16 ``(width, length)`` grid in units of
``vertical_scale`` metres, one sample every ``horizontal_scale`` metres; x runs along the
first axis. Each generator adds to (or sets) that grid and returns the terrain. Lengths
and heights are given in metres and truncated to whole samples and units, as the SDK's
are. Random draws use numpy's global generator, which legged_gym seeds.
"""

import numpy as np

# exported by `import *` as the SDK's module exports them: anymal_terrain uses that gymutil
from . import gymapi, gymutil  # noqa: F401


class SubTerrain:
    def __init__(self, terrain_name="terrain", width=256, length=256, vertical_scale=1.0,
                 horizontal_scale=1.0):
        self.terrain_name = terrain_name
        self.vertical_scale = vertical_scale
        self.horizontal_scale = horizontal_scale
        self.width = width
        self.length = length
        self.height_field_raw = np.zeros((width, length), dtype=np.int16)


def _samples(terrain, metres):
    return int(metres / terrain.horizontal_scale)


def _units(terrain, metres):
    return int(metres / terrain.vertical_scale)


def _add(terrain, heights):
    terrain.height_field_raw += np.asarray(heights).astype(np.int16)
    return terrain


def _centre(terrain, size):
    """The (rows, cols) slices of a centred square of ``size`` samples."""
    rows = slice((terrain.width - size) // 2, (terrain.width + size) // 2)
    cols = slice((terrain.length - size) // 2, (terrain.length + size) // 2)
    return rows, cols


def random_uniform_terrain(terrain, min_height, max_height, step=1, downsampled_scale=None):
    """Heights drawn uniformly from ``min_height, min_height + step, ..., max_height`` on a
    grid ``downsampled_scale`` metres apart (default: every sample), interpolated
    bilinearly to every sample and added."""
    spacing = terrain.horizontal_scale if downsampled_scale is None else downsampled_scale
    low, high, unit = (_units(terrain, v) for v in (min_height, max_height, step))
    if unit < 1:
        raise ValueError("step %g is less than one vertical_scale (%g)"
                         % (step, terrain.vertical_scale))
    levels = np.arange(low, high + unit, unit)
    coarse = np.random.choice(levels, (int(terrain.width * terrain.horizontal_scale / spacing),
                                       int(terrain.length * terrain.horizontal_scale / spacing)))
    return _add(terrain, np.rint(_resample(coarse, terrain.width, terrain.length)))


def _resample(grid, rows, cols):
    """``grid`` stretched bilinearly over ``rows`` x ``cols`` (corners stay corners)."""
    def along(values, size, axis):
        points = np.linspace(0, values.shape[axis] - 1, size)
        lower = np.clip(np.floor(points).astype(int), 0, max(values.shape[axis] - 2, 0))
        upper = np.minimum(lower + 1, values.shape[axis] - 1)
        weight = points - lower
        shape = [1, 1]
        shape[axis] = size
        weight = weight.reshape(shape)
        return (np.take(values, lower, axis=axis) * (1 - weight)
                + np.take(values, upper, axis=axis) * weight)
    return along(along(grid.astype(np.float64), rows, 0), cols, 1)


def sloped_terrain(terrain, slope=1):
    """A ramp along x rising ``slope`` metres per metre."""
    x = np.arange(terrain.width).reshape(-1, 1)
    top = int(slope * terrain.horizontal_scale / terrain.vertical_scale * terrain.width)
    return _add(terrain, np.broadcast_to(top * x / terrain.width,
                                         terrain.height_field_raw.shape))


def pyramid_sloped_terrain(terrain, slope=1, platform_size=1.0):
    """Slopes of ``slope`` rising from the edges to a flat centre platform of
    ``platform_size`` metres (a pit when ``slope`` < 0)."""
    half_x, half_y = terrain.width // 2, terrain.length // 2
    fx = (half_x - np.abs(half_x - np.arange(terrain.width))) / half_x
    fy = (half_y - np.abs(half_y - np.arange(terrain.length))) / half_y
    top = int(slope * terrain.horizontal_scale / terrain.vertical_scale * half_x)
    _add(terrain, top * np.outer(fx, fy))
    rows, cols = _centre(terrain, 2 * (_samples(terrain, platform_size) // 2))
    level = int(terrain.height_field_raw[rows.start, cols.start])
    np.clip(terrain.height_field_raw, min(level, 0), max(level, 0),
            out=terrain.height_field_raw)
    return terrain


def discrete_obstacles_terrain(terrain, max_height, min_size, max_size, num_rects,
                               platform_size=1.0):
    """``num_rects`` rectangles, sides ``min_size`` to ``max_size`` metres, each set to one
    of -max, -max/2, max/2, max; the centre platform stays at 0."""
    top = _units(terrain, max_height)
    heights = [-top, -top // 2, top // 2, top]
    sizes = np.arange(_samples(terrain, min_size), _samples(terrain, max_size), 4)
    if len(sizes) == 0:
        raise ValueError("min_size %g and max_size %g leave no obstacle size (they differ by "
                         "less than one horizontal_scale)" % (min_size, max_size))
    for _ in range(int(num_rects)):
        width, length = np.random.choice(sizes), np.random.choice(sizes)
        x = np.random.choice(np.arange(0, terrain.width - width, 4))
        y = np.random.choice(np.arange(0, terrain.length - length, 4))
        terrain.height_field_raw[x:x + width, y:y + length] = np.random.choice(heights)
    terrain.height_field_raw[_centre(terrain, _samples(terrain, platform_size))] = 0
    return terrain


def wave_terrain(terrain, num_waves=1, amplitude=1.0):
    """``num_waves`` sine waves across the terrain's length, ``amplitude`` metres peak to
    peak along each axis."""
    if num_waves <= 0:
        return terrain
    half = _units(terrain, 0.5 * amplitude)
    period = terrain.length / (num_waves * 2 * np.pi)
    x = np.arange(terrain.width).reshape(-1, 1)
    y = np.arange(terrain.length).reshape(1, -1)
    return _add(terrain, half * np.cos(y / period) + half * np.sin(x / period))


def stairs_terrain(terrain, step_width, step_height):
    """Steps along x, each ``step_width`` metres deep and ``step_height`` metres higher."""
    width, height = _samples(terrain, step_width), _units(terrain, step_height)
    for k in range(terrain.width // width):
        terrain.height_field_raw[k * width:(k + 1) * width, :] += (k + 1) * height
    return terrain


def pyramid_stairs_terrain(terrain, step_width, step_height, platform_size=1.0):
    """Square rings of steps up to a centre platform of ``platform_size`` metres (down to
    it when ``step_height`` < 0)."""
    width, height = _samples(terrain, step_width), _units(terrain, step_height)
    platform = _samples(terrain, platform_size)
    x0, x1, y0, y1, level = 0, terrain.width, 0, terrain.length, 0
    while x1 - x0 > platform and y1 - y0 > platform:
        x0, x1, y0, y1 = x0 + width, x1 - width, y0 + width, y1 - width
        level += height
        terrain.height_field_raw[x0:x1, y0:y1] = level
    return terrain


def stepping_stones_terrain(terrain, stone_size, stone_distance, max_height,
                            platform_size=1.0, depth=-10):
    """Square stones ``stone_size`` metres wide, ``stone_distance`` apart, at random heights
    within ``max_height``, over holes ``depth`` metres deep; rows (along the longer side)
    start at a random offset; the centre platform is at 0."""
    size, gap = _samples(terrain, stone_size), _samples(terrain, stone_distance)
    top = _units(terrain, max_height)
    heights = np.arange(-top - 1, top)
    field = terrain.height_field_raw
    field[:, :] = _units(terrain, depth)
    rows_along_y = terrain.length >= terrain.width
    view = field if rows_along_y else field.T  # a view: writes land in the terrain
    across, along = view.shape
    for start in range(0, along, size + gap):
        band = slice(start, min(along, start + size))
        offset = np.random.randint(0, size)
        view[0:max(0, offset - gap), band] = np.random.choice(heights)
        for stone in range(offset, across, size + gap):
            view[stone:min(across, stone + size), band] = np.random.choice(heights)
    field[_centre(terrain, _samples(terrain, platform_size))] = 0
    return terrain


def convert_heightfield_to_trimesh(height_field_raw, horizontal_scale, vertical_scale,
                                   slope_threshold=None):
    """Vertices ``(rows * cols, 3)`` float32 in metres and triangles ``(2 (rows-1)(cols-1),
    3)`` uint32, two per grid cell, facing up. With ``slope_threshold``, a vertex at the foot
    of a step steeper than it moves under the step's edge, so the step's face is vertical."""
    heights = np.asarray(height_field_raw)
    rows, cols = heights.shape
    x = np.repeat(np.arange(rows, dtype=np.float64).reshape(-1, 1), cols, axis=1)
    y = np.repeat(np.arange(cols, dtype=np.float64).reshape(1, -1), rows, axis=0)
    if slope_threshold is not None:
        x, y = _steepen(heights.astype(np.float64), x, y,
                        slope_threshold * horizontal_scale / vertical_scale)
    vertices = np.stack([x.ravel() * horizontal_scale, y.ravel() * horizontal_scale,
                         heights.ravel() * vertical_scale], axis=1).astype(np.float32)
    corner = (np.arange(rows - 1).reshape(-1, 1) * cols + np.arange(cols - 1)).ravel()
    # (i, j), (i, j + 1), (i + 1, j), (i + 1, j + 1)
    a, b, c, d = corner, corner + 1, corner + cols, corner + cols + 1
    triangles = np.empty((2 * len(corner), 3), dtype=np.uint32)
    triangles[0::2] = np.stack([a, d, b], axis=1)
    triangles[1::2] = np.stack([a, c, d], axis=1)
    return vertices, triangles


def _steepen(heights, x, y, threshold):
    """Shift each vertex by one sample towards a neighbour that rises more than
    ``threshold`` units above it (along x, along y, or diagonally when neither)."""
    move_x, move_y, move_diagonal = (np.zeros_like(heights) for _ in range(3))
    rise_x = heights[1:, :] - heights[:-1, :]
    move_x[:-1, :] += rise_x > threshold
    move_x[1:, :] -= -rise_x > threshold
    rise_y = heights[:, 1:] - heights[:, :-1]
    move_y[:, :-1] += rise_y > threshold
    move_y[:, 1:] -= -rise_y > threshold
    rise_d = heights[1:, 1:] - heights[:-1, :-1]
    move_diagonal[:-1, :-1] += rise_d > threshold
    move_diagonal[1:, 1:] -= -rise_d > threshold
    return (x + move_x + move_diagonal * (move_x == 0),
            y + move_y + move_diagonal * (move_y == 0))
