"""gymapi's value types: vectors, transforms, parameter structs, handles and ``Tensor``.

Fields are those the stubs (``isaacgym-stubs`` 1.1rc4) annotate on each class; defaults
are the SDK's where its docstrings or the IsaacGym docs state them, else documented in
docs/isaacgym.md ("Assumptions of the SDK fake").
"""

import math
from typing import Any, ClassVar, Dict

import numpy as np

from ._enums import ContactCollection, DofDriveMode, MeshNormalMode, UpAxis

# The DOF-properties record of get_asset_dof_properties (legged_gym and IsaacGymEnvs read
# these field names: hasLimits, lower, upper, driveMode, velocity, effort, stiffness,
# damping, friction, armature).
DOF_PROPERTIES = np.dtype([("hasLimits", "?"), ("lower", "<f4"), ("upper", "<f4"),
                           ("driveMode", "<i4"), ("velocity", "<f4"), ("effort", "<f4"),
                           ("stiffness", "<f4"), ("damping", "<f4"), ("friction", "<f4"),
                           ("armature", "<f4")])
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


class _Fields:
    """A parameter struct: the fields of ``DEFAULTS`` (values are copied per instance)."""

    DEFAULTS: ClassVar[Dict[str, Any]] = {}

    def __init__(self):
        for name, value in self.DEFAULTS.items():
            setattr(self, name, value() if callable(value) else value)

    def __setattr__(self, name, value):
        if name not in self.DEFAULTS:  # pybind11 structs refuse unknown attributes
            raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))
        object.__setattr__(self, name, value)

    def __getstate__(self):
        return tuple(getattr(self, name) for name in self.DEFAULTS)

    def __setstate__(self, arg0):
        for name, value in zip(self.DEFAULTS, arg0):
            object.__setattr__(self, name, value)


class PhysXParams(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "always_use_articulations": False, "bounce_threshold_velocity": 0.2,
        # the docstring of ContactCollection: CC_ALL_SUBSTEPS "(default)"
        "contact_collection": ContactCollection.CC_ALL_SUBSTEPS,
        "contact_offset": 0.02, "default_buffer_size_multiplier": 2.0,
        "friction_correlation_distance": 0.025, "friction_offset_threshold": 0.04,
        "max_depenetration_velocity": 100.0, "max_gpu_contact_pairs": 1024 * 1024,
        "num_position_iterations": 4, "num_subscenes": 0, "num_threads": 0,
        "num_velocity_iterations": 1, "rest_offset": 0.001, "solver_type": 1, "use_gpu": False,
    }


class FlexParams(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "contact_regularization": 0.0, "deterministic_mode": False, "dynamic_friction": 1.0,
        "friction_mode": 0, "geometric_stiffness": 1.0, "max_rigid_contacts": 1000000,
        "max_soft_contacts": 1000000, "num_inner_iterations": 50, "num_outer_iterations": 4,
        "particle_friction": 0.0, "relaxation": 0.75, "return_contacts": False,
        "shape_collision_distance": 0.001, "shape_collision_margin": 0.001,
        "solver_type": 5, "static_friction": 0.0, "warm_start": 0.4,
    }


class SimParams(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "dt": 1.0 / 60.0, "enable_actor_creation_warning": True, "flex": FlexParams,
        "gravity": lambda: Vec3(0.0, -9.80665, 0.0), "num_client_threads": 0,
        "physx": PhysXParams, "stress_visualization": False, "stress_visualization_max": 1e5,
        "stress_visualization_min": 0.0, "substeps": 2, "up_axis": UpAxis.UP_AXIS_Y,
        "use_gpu_pipeline": False,
    }


class PlaneParams(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "distance": 0.0, "dynamic_friction": 1.0, "normal": lambda: Vec3(0.0, 1.0, 0.0),
        "restitution": 0.0, "segmentation_id": 0, "static_friction": 1.0}


class VhacdParams(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "alpha": 0.05, "beta": 0.05, "concavity": 0.0, "convex_hull_approximation": True,
        "convex_hull_downsampling": 4, "max_convex_hulls": 64,
        "max_num_vertices_per_ch": 64, "min_volume_per_ch": 0.0001, "mode": 0,
        "ocl_acceleration": True, "pca": 0, "plane_downsampling": 4,
        "project_hull_vertices": True, "resolution": 100000}


class AssetOptions(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "angular_damping": 0.5, "armature": 0.0, "collapse_fixed_joints": False,
        "convex_decomposition_from_submeshes": False,
        "default_dof_drive_mode": int(DofDriveMode.DOF_MODE_NONE), "density": 1000.0,
        "disable_gravity": False, "enable_gyroscopic_forces": True, "fix_base_link": False,
        "flip_visual_attachments": False, "linear_damping": 0.0, "max_angular_velocity": 64.0,
        "max_linear_velocity": 1000.0, "mesh_normal_mode": MeshNormalMode.FROM_ASSET,
        "min_particle_mass": 1e-9,
        "override_com": False, "override_inertia": False, "replace_cylinder_with_capsule": False,
        "slices_per_cylinder": 20, "tendon_limit_stiffness": 1.0, "thickness": 0.02,
        "use_mesh_materials": False, "use_physx_armature": True, "vhacd_enabled": False,
        "vhacd_params": VhacdParams,
    }


class CameraProperties(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "enable_tensors": False, "far_plane": 2000000.0, "height": 900,
        "horizontal_fov": 90.0, "near_plane": 0.1, "supersampling_horizontal": 1,
        "supersampling_vertical": 1, "use_collision_geometry": False, "width": 1600}


class RigidBodyProperties(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "com": Vec3, "flags": 0, "inertia": Mat33, "invInertia": Mat33, "invMass": 0.0,
        "mass": 0.0}


class IndexRange(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {"count": 0, "start": 0}


class RigidShapeProperties(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "compliance": 0.0, "contact_offset": 0.02, "filter": 0, "friction": 1.0,
        "restitution": 0.0, "rest_offset": 0.0, "rolling_friction": 0.0,
        "thickness": 0.0, "torsion_friction": 0.0}


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
