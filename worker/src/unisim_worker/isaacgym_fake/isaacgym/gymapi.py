"""The fake ``isaacgym.gymapi``: the SDK's names, signatures (``isaacgym-stubs`` 1.1rc4)
and documented behaviour, simulated by MuJoCo.

Misuse that the real SDK would accept silently (or crash on) raises
``isaacgym._sim.FakeError`` (a RuntimeError) naming the problem and the fix; failures the
SDK reports by value (None, False) are reported so, with the reason on stderr.
"""

import torch  # noqa: F401  (before mujoco: the other order aborts at exit under EGL)

from ._enums import (  # noqa: F401
    FLAGS,
    MEMBERS,
    CameraFollowMode,
    ContactCollection,
    CoordinateSpace,
    DofDriveMode,
    DofType,
    ImageType,
    IndexDomain,
    JointType,
    KeyboardInput,
    MeshNormalMode,
    MeshType,
    MouseInput,
    SimType,
    SoftMaterialType,
    TendonType,
    TensorDataType,
    UpAxis,
    UsdMaterialMode,
)
from ._gym_actors import ActorsMixin as _ActorsMixin
from ._gym_base import GymBase as _GymBase
from ._gym_base import traced as _traced
from ._gym_build import BuildMixin as _BuildMixin
from ._gym_graphics import GraphicsMixin as _GraphicsMixin
from ._gym_tensors import TensorMixin as _TensorMixin
from ._structs import (  # noqa: F401
    ActuatorProperties,
    AssetOptions,
    CameraProperties,
    FlexParams,
    ForceSensorProperties,
    HeightFieldParams,
    IndexRange,
    PhysXParams,
    PlaneParams,
    RigidBodyProperties,
    RigidShapeProperties,
    SimParams,
    TriangleMeshParams,
    VhacdParams,
)
from ._types import (  # noqa: F401
    Asset,
    Env,
    Mat33,
    Quat,
    Sim,
    Tensor,
    Transform,
    Vec3,
    Viewer,
)

globals().update(MEMBERS)  # DOF_MODE_POS, SIM_PHYSX, IMAGE_COLOR, ...: module constants
globals().update(FLAGS)


@_traced
class Gym(_BuildMixin, _ActorsMixin, _TensorMixin, _GraphicsMixin, _GymBase):
    """The gym: one per process (``acquire_gym``)."""


_GYM = []


def acquire_gym(*args, **kwargs):
    if not _GYM:
        _GYM.append(Gym())
    return _GYM[0]
