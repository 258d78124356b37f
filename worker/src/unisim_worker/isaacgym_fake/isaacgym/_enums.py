"""gymapi's enumerations (pybind11 enums) and integer flags.

Members and their order come from the "Members:" lists of the SDK docstrings carried by
``isaacgym-stubs`` 1.1rc4; values are the member's position in that list (pybind11's
declaration order), except where the docstring states a value (ContactCollection). See
"Assumptions of the SDK fake" in docs/isaacgym.md.
"""

from typing import Any, ClassVar, Dict


class _Enum:
    """A pybind11-style enum member: built from an int, ``int()``-able, named, hashable."""

    __members__: ClassVar[Dict[str, Any]] = {}

    def __init__(self, arg0):
        value = int(arg0)
        names = [name for name, member in type(self).__members__.items()
                 if int(member) == value]
        self._value = value
        self._name = names[0] if names else "???"

    def __int__(self):
        return self._value

    def __index__(self):  # numpy structured fields take members, as IsaacGymEnvs writes them
        return self._value

    def __eq__(self, other):
        if isinstance(other, _Enum):
            return type(other) is type(self) and other._value == self._value
        if isinstance(other, int) and not isinstance(other, bool):
            return other == self._value
        return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        return hash(self._value)

    def __getstate__(self):
        return self._value

    def __setstate__(self, state):
        self.__init__(state)

    def __repr__(self):
        return "<%s.%s: %d>" % (type(self).__name__, self._name, self._value)

    @property
    def name(self):
        return self._name


def _define(cls, names, values=None):
    """Create ``cls``'s members as class attributes; return them by name."""
    members = {}
    for index, name in enumerate(names):
        member = object.__new__(cls)
        member._value = index if values is None else values[index]
        member._name = name
        members[name] = member
        setattr(cls, name, member)
    cls.__members__ = members
    return members


class CameraFollowMode(_Enum):
    pass


class ContactCollection(_Enum):
    pass


class CoordinateSpace(_Enum):
    pass


class DofDriveMode(_Enum):
    pass


class DofType(_Enum):
    pass


class ImageType(_Enum):
    pass


class IndexDomain(_Enum):
    pass


class JointType(_Enum):
    pass


class KeyboardInput(_Enum):
    pass


class MeshNormalMode(_Enum):
    pass


class MeshType(_Enum):
    pass


class MouseInput(_Enum):
    pass


class SimType(_Enum):
    pass


class SoftMaterialType(_Enum):
    pass


class TendonType(_Enum):
    pass


class TensorDataType(_Enum):
    pass


class UpAxis(_Enum):
    pass


class UsdMaterialMode(_Enum):
    pass


KEYS = (
    "KEY_SPACE KEY_APOSTROPHE KEY_COMMA KEY_MINUS KEY_PERIOD KEY_SLASH KEY_0 KEY_1 KEY_2 KEY_3 "
    "KEY_4 KEY_5 KEY_6 KEY_7 KEY_8 KEY_9 KEY_SEMICOLON KEY_EQUAL KEY_A KEY_B KEY_C KEY_D KEY_E "
    "KEY_F KEY_G KEY_H KEY_I KEY_J KEY_K KEY_L KEY_M KEY_N KEY_O KEY_P KEY_Q KEY_R KEY_S KEY_T "
    "KEY_U KEY_V KEY_W KEY_X KEY_Y KEY_Z KEY_LEFT_BRACKET KEY_BACKSLASH KEY_RIGHT_BRACKET "
    "KEY_GRAVE_ACCENT KEY_ESCAPE KEY_TAB KEY_ENTER KEY_BACKSPACE KEY_INSERT KEY_DEL KEY_RIGHT "
    "KEY_LEFT KEY_DOWN KEY_UP KEY_PAGE_UP KEY_PAGE_DOWN KEY_HOME KEY_END KEY_CAPS_LOCK "
    "KEY_SCROLL_LOCK KEY_NUM_LOCK KEY_PRINT_SCREEN KEY_PAUSE KEY_F1 KEY_F2 KEY_F3 KEY_F4 KEY_F5 "
    "KEY_F6 KEY_F7 KEY_F8 KEY_F9 KEY_F10 KEY_F11 KEY_F12 KEY_NUMPAD_0 KEY_NUMPAD_1 KEY_NUMPAD_2 "
    "KEY_NUMPAD_3 KEY_NUMPAD_4 KEY_NUMPAD_5 KEY_NUMPAD_6 KEY_NUMPAD_7 KEY_NUMPAD_8 KEY_NUMPAD_9 "
    "KEY_NUMPAD_DEL KEY_NUMPAD_DIVIDE KEY_NUMPAD_MULTIPLY KEY_NUMPAD_SUBTRACT KEY_NUMPAD_ADD "
    "KEY_NUMPAD_ENTER KEY_NUMPAD_EQUAL KEY_LEFT_SHIFT KEY_LEFT_CONTROL KEY_LEFT_ALT "
    "KEY_LEFT_SUPER KEY_RIGHT_SHIFT KEY_RIGHT_CONTROL KEY_RIGHT_ALT KEY_RIGHT_SUPER KEY_MENU")
MOUSE = (
    "MOUSE_LEFT_BUTTON MOUSE_RIGHT_BUTTON MOUSE_MIDDLE_BUTTON MOUSE_FORWARD_BUTTON "
    "MOUSE_BACK_BUTTON MOUSE_SCROLL_RIGHT MOUSE_SCROLL_LEFT MOUSE_SCROLL_UP MOUSE_SCROLL_DOWN "
    "MOUSE_MOVE_RIGHT MOUSE_MOVE_LEFT MOUSE_MOVE_UP MOUSE_MOVE_DOWN")

MEMBERS = {}
for _cls, _names, _values in (
        (CameraFollowMode, "FOLLOW_POSITION FOLLOW_TRANSFORM", None),
        (ContactCollection, "CC_NEVER CC_LAST_SUBSTEP CC_ALL_SUBSTEPS", (0, 1, 2)),
        (CoordinateSpace, "ENV_SPACE LOCAL_SPACE GLOBAL_SPACE", None),
        (DofDriveMode, "DOF_MODE_NONE DOF_MODE_POS DOF_MODE_VEL DOF_MODE_EFFORT", None),
        (DofType, "DOF_INVALID DOF_ROTATION DOF_TRANSLATION", None),
        (ImageType, "IMAGE_COLOR IMAGE_DEPTH IMAGE_SEGMENTATION IMAGE_OPTICAL_FLOW", None),
        (IndexDomain, "DOMAIN_ACTOR DOMAIN_ENV DOMAIN_SIM", None),
        (JointType, "JOINT_INVALID JOINT_FIXED JOINT_REVOLUTE JOINT_PRISMATIC JOINT_BALL "
                    "JOINT_PLANAR JOINT_FLOATING", None),
        (KeyboardInput, KEYS, None),
        (MeshNormalMode, "FROM_ASSET COMPUTE_PER_VERTEX COMPUTE_PER_FACE", None),
        (MeshType, "MESH_NONE MESH_COLLISION MESH_VISUAL MESH_VISUAL_AND_COLLISION", None),
        (MouseInput, MOUSE, None),
        (SimType, "SIM_PHYSX SIM_FLEX", None),
        (SoftMaterialType, "MAT_COROTATIONAL MAT_NEOHOOKEAN", None),
        (TendonType, "TENDON_FIXED TENDON_SPATIAL", None),
        (TensorDataType, "DTYPE_FLOAT32 DTYPE_UINT32 DTYPE_UINT64 DTYPE_UINT8 DTYPE_INT16", None),
        (UpAxis, "UP_AXIS_Y UP_AXIS_Z", None),
        (UsdMaterialMode, "USD_MATERIAL_DISPLAY_COLOR USD_MATERIAL_PREVIEW_SURFACE "
                          "USD_MATERIAL_MDL", None)):
    MEMBERS.update(_define(_cls, _names.split(), _values))

# Integer flags, with the values the stubs give (module-level ``int`` constants).
FLAGS = {
    "AXIS_ALL": 63, "AXIS_NONE": 0, "AXIS_ROTATION": 56, "AXIS_SWING_1": 16,
    "AXIS_SWING_2": 32, "AXIS_TRANSLATION": 7, "AXIS_TWIST": 8, "AXIS_X": 1, "AXIS_Y": 2,
    "AXIS_Z": 4, "DEFAULT_VIEWER_HEIGHT": 900, "DEFAULT_VIEWER_WIDTH": 1600,
    "INVALID_HANDLE": -1, "RIGID_BODY_DISABLE_GRAVITY": 1, "RIGID_BODY_DISABLE_SIMULATION": 2,
    "RIGID_BODY_ENABLE_GYROSCOPIC_FORCES": 4, "RIGID_BODY_NONE": 0, "STATE_ALL": 3,
    "STATE_NONE": 0, "STATE_POS": 1, "STATE_VEL": 2,
}
