"""The fake ``isaacgym.gymapi``: the SDK's names, signatures (``isaacgym-stubs`` 1.1rc4)
and documented behaviour, simulated by MuJoCo.

Misuse that the real SDK would accept silently (or crash on) raises
``isaacgym._sim.FakeError`` (a RuntimeError) naming the problem and the fix; failures the
SDK reports by value (None, False) are reported so, with the reason on stderr.
"""

from ._enums import FLAGS, MEMBERS
from ._enums import (CameraFollowMode, ContactCollection, CoordinateSpace,  # noqa: F401
                     DofDriveMode, DofType, ImageType, IndexDomain, JointType, KeyboardInput,
                     MeshNormalMode, MeshType, MouseInput, SimType, SoftMaterialType,
                     TendonType, TensorDataType, UpAxis, UsdMaterialMode)
from ._gym_base import GymBase, traced
from ._gym_build import BuildMixin
from ._gym_graphics import GraphicsMixin
from ._gym_tensors import TensorMixin
from ._types import (AssetOptions, CameraProperties, FlexParams, Mat33,  # noqa: F401
                     PhysXParams, PlaneParams, Quat, RigidBodyProperties, RigidShapeProperties,
                     SimParams, Tensor, Transform, Vec3, VhacdParams)
from ._types import Asset, Env, Sim, Viewer  # noqa: F401

globals().update(MEMBERS)  # DOF_MODE_POS, SIM_PHYSX, IMAGE_COLOR, ...: module constants
globals().update(FLAGS)


@traced
class Gym(BuildMixin, TensorMixin, GraphicsMixin, GymBase):
    """The gym: one per process (``acquire_gym``)."""


_GYM = []


def acquire_gym(*args, **kwargs):
    if not _GYM:
        _GYM.append(Gym())
    return _GYM[0]
