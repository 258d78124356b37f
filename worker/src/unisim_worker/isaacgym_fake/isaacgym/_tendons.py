"""Gym: an MJCF asset's fixed tendons, as MuJoCo fixed tendons.

The SDK imports an MJCF's fixed tendons (IsaacGymEnvs' ShadowHand reads its four
``robot0:T_*J1c`` tendons by name and sets their ``limit_stiffness`` and ``damping``,
shadow_hand.py); ``TendonProperties`` (stubs) holds ``stiffness``, ``damping``,
``fixed_spring_rest_length``, ``is_fixed_limited``, ``fixed_lower_limit``,
``fixed_upper_limit``, ``limit_stiffness`` and the read-only ``type``, ``num_joints`` and
``num_attachments``. The limit is a spring: ``AssetOptions.tendon_limit_stiffness``
"Default tendon limit stiffness. Choose small as the limits are not implicitly solved",
the value a tendon imports with. Asset properties reach the actors created afterwards
(as ``set_asset_rigid_shape_properties``'); an actor's own are set with
``set_actor_tendon_properties``. Spatial tendons are dropped (``_mjcf``).

In MuJoCo: the tendon's length is the sum of coefficient times joint position, as the
MJCF says; ``stiffness``, ``damping`` and the rest length are the tendon's own
(``tendon_stiffness``, ``tendon_damping``, ``tendon_lengthspring``); the limits its range,
enforced by a limit constraint whose spring is ``limit_stiffness``: MuJoCo's direct
reference ``solreflimit = (-k * w, 0)`` with ``w`` the tendon's inverse inertia at the
reference pose (``tendon_invweight0``), no stiffer than MuJoCo's ``refsafe`` allows (a
time constant of twice the substep: ``k * w <= 1 / (4 h^2)``); its damping is the
tendon's own.
"""

import copy

from ._enums import TendonType
from ._errors import log_error


class TendonProperties:
    """The SDK's struct (stubs' fields); ``type``, ``num_joints``, ``num_attachments`` are
    read-only."""

    def __init__(self):
        self.damping = 0.0
        self.fixed_lower_limit = 0.0
        self.fixed_spring_rest_length = 0.0
        self.fixed_upper_limit = 0.0
        self.is_fixed_limited = False
        self.limit_stiffness = 0.0
        self.stiffness = 0.0
        self._joints = 0

    @property
    def type(self):
        return TendonType.TENDON_FIXED

    @property
    def num_joints(self):
        return self._joints

    @property
    def num_attachments(self):
        return 0  # spatial tendons only


def imported(model, options):
    """The compiled asset ``model``'s tendons: (names, properties)."""
    names, result = [], []
    for t in range(model.ntendon):
        props = TendonProperties()
        props.stiffness = float(model.tendon_stiffness[t])
        props.damping = float(model.tendon_damping[t])
        props.fixed_spring_rest_length = float(model.tendon_lengthspring[t].flat[0])
        props.is_fixed_limited = bool(model.tendon_limited[t])
        props.fixed_lower_limit, props.fixed_upper_limit = map(float, model.tendon_range[t])
        props.limit_stiffness = float(options.tendon_limit_stiffness)
        props._joints = int(model.tendon_num[t])
        names.append(model.tendon(t).name)
        result.append(props)
    return names, result


def bind(env):
    """Each actor's tendon properties into ``env``'s new model (MjSpec attaches each actor's
    tendons with it: they follow in actor order)."""
    for actor in env.actors:
        apply(env, actor)


def apply(env, actor):
    model = env.model
    params = env.sim.params
    step = float(params.dt) / max(int(params.substeps), 1)
    first = sum(len(other.asset.tendon_names) for other in env.actors[:env.actors.index(actor)])
    for t, props in enumerate(actor.tendon_props, start=first):
        model.tendon_stiffness[t] = props.stiffness
        model.tendon_damping[t] = props.damping
        model.tendon_lengthspring[t] = props.fixed_spring_rest_length
        stiffness = float(props.limit_stiffness) * float(model.tendon_invweight0[t])
        # a limit without stiffness pulls nothing (MuJoCo's would still stop the tendon)
        model.tendon_limited[t] = bool(props.is_fixed_limited) and stiffness > 0.0
        model.tendon_range[t] = (props.fixed_lower_limit, props.fixed_upper_limit)
        model.tendon_solref_lim[t] = (-min(stiffness, 1.0 / (4.0 * step * step)), 0.0)


def _checked(props, count, call):
    if len(props) != count:
        log_error("%s: %d properties for %d tendons" % (call, len(props), count))
        return None
    return [copy.deepcopy(p) for p in props]


class TendonMixin:
    def get_asset_tendon_count(self, arg0):
        return len(arg0._data.tendon_names)

    def get_asset_tendon_name(self, arg0, arg1):
        return arg0._data.tendon_names[arg1]

    def get_asset_tendon_properties(self, arg0):
        return copy.deepcopy(arg0._data.tendon_props)

    def set_asset_tendon_properties(self, arg0, arg1):
        data = arg0._data
        props = _checked(arg1, len(data.tendon_names), "set_asset_tendon_properties")
        if props is None:
            return False
        data.tendon_props = props
        return True

    def get_actor_tendon_count(self, arg0, arg1):
        return len(self._actor(arg0, arg1).asset.tendon_names)

    def get_actor_tendon_name(self, arg0, arg1, arg2):
        return self._actor(arg0, arg1).asset.tendon_names[arg2]

    def get_actor_tendon_properties(self, arg0, arg1):
        return copy.deepcopy(self._actor(arg0, arg1).tendon_props)

    def set_actor_tendon_properties(self, arg0, arg1, arg2):
        actor = self._actor(arg0, arg1)
        props = _checked(arg2, len(actor.asset.tendon_names), "set_actor_tendon_properties")
        if props is None:
            return False
        actor.tendon_props = props
        apply(arg0._env, actor)
        return True
