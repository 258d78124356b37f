"""CPU MuJoCo: ``num_envs`` independent simulations of one ``MjModel``, stepped by one of
``steppers`` (chosen once, at INIT).
"""

import os

import numpy as np

from unisim_protocol.arena import ArenaCache
from unisim_protocol.schemas import parse_capture_request, slot

from .. import physics, rendering
from ..base import Engine
from ..mjmodel import Scene
from . import physics as mujoco_physics
from .steppers import BatchStepper, shared_queue, stepper_for, warning_names


class MujocoEngine(Engine):
    physics_quantities = mujoco_physics.QUANTITIES

    def __init__(self):
        self.slots = {}
        self.stepper = None
        self.frames = None
        self.images = ArenaCache(keep=1)

    def init(self, spec, worker):
        mujoco = rendering.import_mujoco()
        scene = Scene(mujoco, spec)
        model, num_envs = scene.model, scene.num_envs
        stepper_class = stepper_for(mujoco, num_envs, spec.get("queue"))
        worker.progress(0, num_envs, "creating %d simulations" % num_envs)
        # More threads than simulations only adds thread-pool wake-ups to every step.
        threads = min(int(spec.get("threads") or os.cpu_count() or 1), num_envs)
        self.stepper = stepper_class(mujoco, model, num_envs, scene.key_id, threads)
        self.mujoco = mujoco
        self.model = model
        self.queue = shared_queue(spec.get("queue"), self.stepper, num_envs)
        layout = scene.layout("mujoco", mujoco.__version__, self.stepper.name)
        # Per-env MuJoCo warnings of the last step (bit k: mjtWarning k), named for the host.
        layout["slots"].append(slot("warnings", "|u1", []))
        if self.queue is not None:
            layout["slots"] += self.stepper.state_slots()
        layout["report"] = {"warnings": warning_names(mujoco)}
        self.physics = self.physics_applier(spec.get("physics"))
        layout["slots"] += physics.slots(spec.get("physics"))
        return layout

    # -- physics randomisation (engines/mujoco/physics.py) -----------------------------

    def physics_applier(self, spec):
        """What applies ``spec``'s draws to this engine's simulations (None: no spec)."""
        if not spec:
            return None
        plan = mujoco_physics.MujocoPhysics(self.mujoco, self.model, spec)
        stepper = self.stepper
        if isinstance(stepper, BatchStepper):
            return mujoco_physics.BatchPhysics(plan, stepper.batch, stepper.qvel)
        stepper.own_models()
        return mujoco_physics.LoopPhysics(plan, stepper)

    def randomize(self, parameters, push, resetting=False):
        slots = self.slots
        ids = np.flatnonzero(slots["reset_mask"])
        if parameters and "physics" in slots:
            self.physics.apply(ids, slots["physics"], keep_state=not resetting)
        if push:
            self.physics.push(ids, slots["push"])
            self.stepper.publish(ids, slots["qpos"], slots["qvel"])

    def attach(self, slots):
        self.slots = slots
        self.step = self.stepper.bind(slots)  # the stepper's own, over these slots
        queue = self.queue
        if queue is not None:
            self.stepper.share(slots, queue["fd"], queue["bounds"], queue["owner"])
            if not queue["owner"]:
                return  # the owner publishes the shared rows
        everything = np.arange(self.slots["qpos"].shape[0])
        self.stepper.publish(everything, slots["qpos"], slots["qvel"])

    def reset(self, use_qpos, use_qvel):
        slots = self.slots
        ids = np.flatnonzero(slots["reset_mask"])
        qpos = slots["qpos"] if use_qpos else None
        qvel = slots["qvel"] if use_qvel else None
        self.stepper.reset_rows(ids, qpos, qvel)
        self.stepper.publish(ids, slots["qpos"], slots["qvel"])

    def capture(self, request):
        """Render env ``env_id`` from ``camera`` into the image slot the request declares.

        The env's state is copied into a scratch MjData and run through ``mj_forward``, so
        the frame is the one an in-process renderer draws for that qpos (and mocap)."""
        request = parse_capture_request(request)
        num_envs = self.slots["qpos"].shape[0]
        env = request["env_id"]
        if not 0 <= env < num_envs:
            raise ValueError("env_id must lie in [0, %d), got %d" % (num_envs, env))
        camera = rendering.camera_id(self.mujoco, self.model, request.get("camera"))
        views = self.images.views(request["image"])
        rgb, _ = rendering.image_rows(views["rgb"], None, (0, 1), int(request["width"]),
                                      int(request["height"]))
        if self.frames is None:
            self.frames = rendering.FrameRenderer(self.mujoco, self.model)
            self.scratch = self.mujoco.MjData(self.model)
        self.stepper.get_data(env, self.scratch)
        self.mujoco.mj_forward(self.model, self.scratch)
        self.frames.render(self.scratch, camera, rgb[0])
        return {}

    def close(self):
        if self.frames is not None:
            self.frames.close()
        self.stepper = None


ENGINE = MujocoEngine
