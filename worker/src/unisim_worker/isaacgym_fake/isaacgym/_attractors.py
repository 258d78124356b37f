"""Gym: rigid body attractors, as MuJoCo equality constraints to the world.

The SDK (``AttractorProperties``' docstring): "The Attractor is used to pull a rigid body
towards a pose. Each pose axis can be individually selected"; ``rigid_handle`` is the
body (an env's rigid body handle, ``_rigid``), ``offset`` the attracted frame in the
body's frame, ``target`` the pose to attract to (in the env's frame: IsaacGymEnvs'
BallBalance gives targets in its env's coordinates, and the docs' franka_attractor
example takes them from ``get_rigid_transform``, "in the env frame"), ``stiffness`` and
``damping`` those of the pull; ``axes`` 0 disables it.

Each attractor is an equality between its body and the world in the env's MjModel: a
``connect`` (the offset's point held at the target's) for AXIS_TRANSLATION, a ``weld``
(the whole offset frame at the target) for AXIS_ALL; other axis sets are beyond the
fake. The spring-damper's stiffness ``k`` and damping ``c`` act through the body's
inverse mass ``w`` at the reference pose (MuJoCo's ``body_invweight0``, the chain's
inertia included): MuJoCo's direct constraint reference ``solref = (-k w, -c w)``,
limited to what MuJoCo's own ``refsafe`` allows at the substep ``h`` (a time constant of
``2h``: ``k w <= 1/(4h^2)``, ``c w <= 1/h``), so that an attractor as stiff as
BallBalance's (5e7) holds its body as firmly as MuJoCo can stably hold it.
"""

import copy
import weakref

import mujoco
import numpy as np

from ._enums import FLAGS
from ._errors import fake_limit, log_error
from ._rigid import env_body
from ._types import Transform

TRANSLATION, ALL = FLAGS["AXIS_TRANSLATION"], FLAGS["AXIS_ALL"]
_ATTRACTORS = weakref.WeakKeyDictionary()  # EnvSim: [Attractor], by handle


class AttractorProperties:
    """The SDK's struct (stubs' fields); defaults zero, transforms the identity."""

    def __init__(self):
        self.axes = 0
        self.damping = 0.0
        self.offset = Transform()
        self.rigid_handle = 0
        self.stiffness = 0.0
        self.target = Transform()


class Attractor:
    def __init__(self, actor, local, props):
        self.actor, self.local = actor, int(local)
        self.props = copy.deepcopy(props)
        self.kind = _kind(int(props.axes))

    def key(self, env):
        return env.actors.index(self.actor), self.local, self.kind


def _kind(axes):
    if axes in (0, ALL):
        return mujoco.mjtEq.mjEQ_WELD  # disabled ones too: enabling them needs no rebuild
    if axes == TRANSLATION:
        return mujoco.mjtEq.mjEQ_CONNECT
    raise fake_limit("attractor axes %d: the fake models attractors on all axes (AXIS_ALL) "
                     "or on the translation axes (AXIS_TRANSLATION) only, as MuJoCo weld and "
                     "connect constraints" % axes)


def attractors(env):
    return _ATTRACTORS.setdefault(env, [])


def key(env):
    """What the env's compiled model depends on."""
    return tuple(attractor.key(env) for attractor in attractors(env))


def add_to(spec, model, env):
    """One equality per attractor in ``spec``; ``model`` is its compilation without them
    (it names the bodies)."""
    roots = [b for b in range(1, model.nbody) if model.body_parentid[b] == 0]
    for attractor in attractors(env):
        k = env.actors.index(attractor.actor)
        equality = spec.add_equality()
        equality.type = attractor.kind
        equality.objtype = mujoco.mjtObj.mjOBJ_BODY
        equality.name1 = model.body(roots[k] + attractor.local).name
        equality.name2 = "world"


def bind(env):
    """Apply each attractor's properties to ``env``'s new model (equalities in creation
    order, after the model's own: the importer drops the assets')."""
    for index in range(len(attractors(env))):
        apply(env, index)


def apply(env, handle):
    attractor = attractors(env)[handle]
    model, data, props = env.model, env.data, attractor.props
    row = model.neq - len(attractors(env)) + handle
    offset, target = props.offset, props.target
    model.eq_data[row] = 0.0
    if attractor.kind == mujoco.mjtEq.mjEQ_CONNECT:
        model.eq_data[row, 0:3] = (offset.p.x, offset.p.y, offset.p.z)
        model.eq_data[row, 3:6] = _point(target)
    else:  # weld: MuJoCo holds body * relpose at the world pose; relquat = offset * target^-1
        model.eq_data[row, 0:3] = _point(target)
        model.eq_data[row, 3:6] = (offset.p.x, offset.p.y, offset.p.z)
        inverse = np.zeros(4)
        mujoco.mju_negQuat(inverse, _wxyz(target))
        mujoco.mju_mulQuat(model.eq_data[row, 6:10], _wxyz(offset), inverse)
        model.eq_data[row, 10] = 1.0  # torques as stiff as forces
    weight = float(model.body_invweight0[attractor.actor.bodies[attractor.local], 0])
    params = env.sim.params
    step = float(params.dt) / max(int(params.substeps), 1)
    stiffness = min(float(props.stiffness) * weight, 1.0 / (4.0 * step * step))
    damping = min(float(props.damping) * weight, 1.0 / step)
    model.eq_solref[row] = (-stiffness, -damping)
    active = int(props.axes) != 0 and stiffness > 0.0
    model.eq_active0[row] = active
    data.eq_active[row] = active


def _point(transform):
    return transform.p.x, transform.p.y, transform.p.z


def _wxyz(transform):
    r = transform.r
    quat = np.array([r.w, r.x, r.y, r.z], dtype=np.float64)
    return quat / max(np.linalg.norm(quat), 1e-12)


class AttractorMixin:
    def create_rigid_body_attractor(self, arg0, arg1):
        """"Creates an attractor for the selected environment using the properties
        defined"; returns its handle in the env."""
        env = arg0._env
        found = env_body(env, arg1.rigid_handle, "create_rigid_body_attractor")
        if found is None:
            return -1
        attractors(env).append(Attractor(found[0], found[1], arg1))
        env.model = None  # the model gains an equality: rebuilt (state kept) when next needed
        return len(attractors(env)) - 1

    def _attractor(self, env, handle, call):
        if not 0 <= int(handle) < len(attractors(env)):
            log_error("%s: attractor %d is not one of env %d (it has %d)" % (
                call, int(handle), env.index, len(attractors(env))))
            return None
        env.physics()
        return attractors(env)[int(handle)]

    def get_attractor_properties(self, arg0, arg1):
        attractor = self._attractor(arg0._env, arg1, "get_attractor_properties")
        return None if attractor is None else copy.deepcopy(attractor.props)

    def set_attractor_properties(self, arg0, arg1, arg2):
        env = arg0._env
        attractor = self._attractor(env, arg1, "set_attractor_properties")
        if attractor is None:
            return False
        found = env_body(env, arg2.rigid_handle, "set_attractor_properties")
        if found is None:
            return False
        changed = Attractor(found[0], found[1], arg2)
        attractors(env)[int(arg1)] = changed
        if changed.key(env) != attractor.key(env):
            env.model = None
        else:
            apply(env, int(arg1))
        return True

    def set_attractor_target(self, arg0, arg1, arg2):
        env = arg0._env
        attractor = self._attractor(env, arg1, "set_attractor_target")
        if attractor is not None:
            attractor.props.target = copy.deepcopy(arg2)
            apply(env, int(arg1))
