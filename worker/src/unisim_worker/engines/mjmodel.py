"""What the MuJoCo-based engines (CPU MuJoCo, MJX) share about one ``MjModel``.

Loading it from the INIT spec, resolving its keyframe, and the layout they report.
"""

from unisim_protocol.schemas import physics_layout, slot


def load_model(mujoco, source):
    """An ``MjModel`` from an MJCF path or XML string."""
    if source.lstrip().startswith("<"):
        return mujoco.MjModel.from_xml_string(source)
    return mujoco.MjModel.from_xml_path(source)


def names(mujoco, model, obj, count):
    return [mujoco.mj_id2name(model, obj, i) or "" for i in range(count)]


class Scene:
    """The model, env count and keyframe of an INIT spec, checked."""

    def __init__(self, mujoco, spec):
        self.mujoco = mujoco
        self.model = load_model(mujoco, spec["model"])
        self.num_envs = int(spec["num_envs"])
        if self.num_envs < 1:
            raise ValueError("num_envs must be at least 1, got %d" % self.num_envs)
        model = self.model
        self.keyframes = names(mujoco, model, mujoco.mjtObj.mjOBJ_KEY, model.nkey)
        keyframe = spec.get("keyframe")
        if keyframe is not None and keyframe not in self.keyframes:
            raise ValueError("model has no keyframe %r; its keyframes: %s"
                             % (keyframe, self.keyframes or "none"))
        self.key_id = None if keyframe is None else self.keyframes.index(keyframe)

    def layout(self, engine, version, stepper, dtype="<f8"):
        """INIT's reply: sizes, names, control ranges and the ctrl/qpos/qvel slots."""
        mujoco, model = self.mujoco, self.model
        obj = mujoco.mjtObj
        return physics_layout(
            engine=engine, engine_version=version, stepper=stepper, num_envs=self.num_envs,
            nq=model.nq, nv=model.nv, nu=model.nu, nbody=model.nbody,
            timestep=model.opt.timestep,
            joint_names=names(mujoco, model, obj.mjOBJ_JOINT, model.njnt),
            actuator_names=names(mujoco, model, obj.mjOBJ_ACTUATOR, model.nu),
            body_names=names(mujoco, model, obj.mjOBJ_BODY, model.nbody),
            keyframes=self.keyframes, ctrl_range=model.actuator_ctrlrange.tolist(),
            slots=[slot("ctrl", dtype, [model.nu]), slot("qpos", dtype, [model.nq]),
                   slot("qvel", dtype, [model.nv])])
