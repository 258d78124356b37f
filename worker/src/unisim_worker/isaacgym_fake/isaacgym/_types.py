"""gymapi's value types: vectors, transforms, handles, ``Tensor`` and the record dtypes.

The parameter structs are in ``_structs``. Defaults and layouts are the SDK's where its
docstrings or the IsaacGym docs state them, else documented in docs/isaacgym.md
("Assumptions of the SDK fake").
"""

import math

import numpy as np

# The DOF-properties record of get_asset_dof_properties (legged_gym and IsaacGymEnvs read
# these field names: hasLimits, lower, upper, driveMode, velocity, effort, stiffness,
# damping, friction, armature). Aligned as the SDK's C struct is: the bool takes 4 bytes,
# so the record is 40 bytes (issue 37) and a raw view of it lines up with the SDK's.
DOF_PROPERTIES = np.dtype([("hasLimits", "?"), ("lower", "<f4"), ("upper", "<f4"),
                           ("driveMode", "<i4"), ("velocity", "<f4"), ("effort", "<f4"),
                           ("stiffness", "<f4"), ("damping", "<f4"), ("friction", "<f4"),
                           ("armature", "<f4")], align=True)
VEC3 = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4")])
QUAT = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("w", "<f4")])
TRANSFORM = np.dtype([("p", VEC3), ("r", QUAT)])
DOF_STATE = np.dtype([("pos", "<f4"), ("vel", "<f4")])  # stub: DofState.dtype


class _NoConstructor:
    """An opaque pybind11 handle: Python code cannot build one (``No constructor defined``)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("%s: No constructor defined!" % type(self).__name__)

    @classmethod
    def _make(cls, **fields):
        handle = object.__new__(cls)
        handle.__dict__.update(fields)
        return handle


class Sim(_NoConstructor):
    pass


class Env(_NoConstructor):
    pass


class Viewer(_NoConstructor):
    pass


class Asset(_NoConstructor):
    pass


class Vec3:
    dtype = VEC3

    def __init__(self, x=0.0, y=0.0, z=0.0):
        self.x, self.y, self.z = float(x), float(y), float(z)

    def _array(self):
        return np.array([self.x, self.y, self.z])

    @staticmethod
    def _of(values):
        return Vec3(*[float(v) for v in values])

    def cross(self, arg0):
        return Vec3._of(np.cross(self._array(), arg0._array()))

    def dot(self, arg0):
        return float(self._array() @ arg0._array())

    def length(self):
        return math.sqrt(self.length_sq())

    def length_sq(self):
        return self.dot(self)

    def normalize(self):
        return self / self.length()

    def __add__(self, arg0):
        return Vec3._of(self._array() + arg0._array())

    def __sub__(self, arg0):
        return Vec3._of(self._array() - arg0._array())

    def __mul__(self, arg0):
        return Vec3._of(self._array() * float(arg0))

    def __truediv__(self, arg0):
        return Vec3._of(self._array() / float(arg0))

    def __neg__(self):
        return Vec3._of(-self._array())

    def __getstate__(self):
        return (self.x, self.y, self.z)

    def __setstate__(self, arg0):
        self.x, self.y, self.z = arg0

    def __repr__(self):
        return "Vec3(%g, %g, %g)" % (self.x, self.y, self.z)


class Quat:
    """x, y, z, w: the SDK's quaternions are xyzw (stub: Quat.dtype)."""

    dtype = QUAT

    def __init__(self, x=0.0, y=0.0, z=0.0, w=1.0):
        self.x, self.y, self.z, self.w = float(x), float(y), float(z), float(w)

    def _wxyz(self):
        return np.array([self.w, self.x, self.y, self.z])

    @staticmethod
    def _of_wxyz(q):
        return Quat(q[1], q[2], q[3], q[0])

    @staticmethod
    def from_axis_angle(arg0, arg1):
        axis = arg0._array() / max(np.linalg.norm(arg0._array()), 1e-12)
        half = float(arg1) / 2.0
        return Quat._of_wxyz(np.concatenate([[math.cos(half)], math.sin(half) * axis]))

    @staticmethod
    def from_euler_zyx(arg0, arg1, arg2):
        """Roll ``arg0`` about x, pitch ``arg1`` about y, yaw ``arg2`` about z (q = z*y*x)."""
        x = Quat.from_axis_angle(Vec3(1, 0, 0), arg0)
        y = Quat.from_axis_angle(Vec3(0, 1, 0), arg1)
        z = Quat.from_axis_angle(Vec3(0, 0, 1), arg2)
        return z * y * x

    def to_euler_zyx(self):
        w, x, y, z = self._wxyz()
        roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
        pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
        yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        return (roll, pitch, yaw)

    def inverse(self):
        return Quat(-self.x, -self.y, -self.z, self.w)

    def normalize(self):
        q = self._wxyz()
        return Quat._of_wxyz(q / np.linalg.norm(q))

    def _matrix(self):
        w, x, y, z = self._wxyz() / np.linalg.norm(self._wxyz())
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])

    def rotate(self, arg0):
        return Vec3._of(self._matrix() @ arg0._array())

    def __mul__(self, arg0):
        w1, x1, y1, z1 = self._wxyz()
        w2, x2, y2, z2 = arg0._wxyz()
        return Quat._of_wxyz([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                              w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                              w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                              w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])

    def __getstate__(self):
        return (self.x, self.y, self.z, self.w)

    def __setstate__(self, arg0):
        self.x, self.y, self.z, self.w = arg0

    def __repr__(self):
        return "Quat(%g, %g, %g, %g)" % (self.x, self.y, self.z, self.w)


class Transform:
    dtype = TRANSFORM

    def __init__(self, p=None, r=None):
        self.p = Vec3() if p is None else p
        self.r = Quat() if r is None else r

    def inverse(self):
        inverse = self.r.inverse()
        return Transform(-inverse.rotate(self.p), inverse)

    def transform_point(self, arg0):
        return self.r.rotate(arg0) + self.p

    def transform_vector(self, arg0):
        return self.r.rotate(arg0)

    def transform_points(self, arg0):
        return np.array([tuple(vars(self.transform_point(Vec3(*tuple(v)))).values())
                         for v in arg0], dtype=VEC3)

    def transform_vectors(self, arg0):
        return np.array([tuple(vars(self.transform_vector(Vec3(*tuple(v)))).values())
                         for v in arg0], dtype=VEC3)

    def __mul__(self, arg0):
        return Transform(self.transform_point(arg0.p), self.r * arg0.r)

    def __getstate__(self):
        return (self.p, self.r)

    def __setstate__(self, arg0):
        self.p, self.r = arg0



class Mat33:
    def __init__(self):
        self.x, self.y, self.z = Vec3(), Vec3(), Vec3()


class Tensor:
    """A gym tensor descriptor (``gymtorch.unwrap_tensor``'s result, ``acquire_*``'s result).

    ``_torch`` is the torch tensor it describes: the fake's stand-in for the raw pointer.
    """

    def __init__(self):
        self.data_address = 0
        self.device = -1
        self.dtype = None
        self.own_data = False
        self.shape = ()
        self._torch = None

    @property
    def data_ptr(self):
        return self.data_address

    @property
    def ndim(self):
        return len(self.shape)
