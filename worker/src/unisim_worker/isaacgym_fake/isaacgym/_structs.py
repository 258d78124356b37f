"""gymapi's parameter structs: plain fields with the SDK's defaults.

Fields are those the stubs (``isaacgym-stubs`` 1.1rc4) annotate on each class; defaults
are the SDK's where its docstrings or the IsaacGym docs state them, else documented in
docs/isaacgym.md ("Assumptions of the SDK fake").
"""

from typing import Any, ClassVar, Dict

from ._enums import ContactCollection, DofDriveMode, MeshNormalMode, UpAxis
from ._errors import fake_limit
from ._types import Mat33, Transform, Vec3


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





class ActuatorProperties(_Fields):
    """An MJCF actuator as the importer keeps it (``get_asset_actuator_properties``)."""

    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "control_limited": False, "force_limited": False, "kp": 0.0, "kv": 0.0,
        "lower_control_limit": 0.0, "lower_force_limit": 0.0, "motor_effort": 0.0,
        "upper_control_limit": 0.0, "upper_force_limit": 0.0}

    @property
    def type(self):
        """Read-only in the stubs, with no documented values: the fake refuses to invent them."""
        raise fake_limit("ActuatorProperties.type: the SDK documents no values for it, so "
                         "the fake does not report one")


class ForceSensorProperties(_Fields):
    # its docstring: forward dynamics and constraint solver forces on by default, the
    # sensor's local frame unless use_world_frame
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "enable_constraint_solver_forces": True, "enable_forward_dynamics_forces": True,
        "use_world_frame": False}


class HeightFieldParams(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "column_scale": 1.0, "dynamic_friction": 1.0, "nbColumns": 0, "nbRows": 0,
        "restitution": 0.0, "row_scale": 1.0, "segmentation_id": 0, "static_friction": 1.0,
        "transform": Transform, "vertical_scale": 1.0}


class TriangleMeshParams(_Fields):
    DEFAULTS: ClassVar[Dict[str, Any]] = {
        "dynamic_friction": 1.0, "nb_triangles": 0, "nb_vertices": 0, "restitution": 0.0,
        "segmentation_id": 0, "static_friction": 1.0, "transform": Transform}
