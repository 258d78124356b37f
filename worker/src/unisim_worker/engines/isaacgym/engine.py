"""IsaacGym Preview 4 (PhysX): ``num_envs`` envs of an MJCF model in one sim.

The host sees MuJoCo's conventions whatever the engine: ``qpos``/``qvel`` in MJCF
document order (free root: env-local position, wxyz quaternion, origin velocity,
body-frame angular velocity), ``ctrl`` per MJCF actuator (position actuators: targets;
motors: forces). ``body_states`` (per body: env-local position, xyzw quaternion, linear
and angular velocity in world axes) and ``contact_forces`` are IsaacGym's own tensors.

Options (INIT ``options``) are documented in ``options`` and docs/isaacgym.md.
The slots live in host shared memory or, on the GPU pipeline, in the host's CUDA arena
(``data_plane="cuda"``, see ``planes``); the sim computes what it publishes as torch
tensors on its own device either way.
The SDK is imported inside ``init`` (``sim``: isaacgym first, then torch).
"""

import os
import tempfile
from typing import Any, List

import numpy as np

from unisim_protocol.arena import ArenaCache
from unisim_protocol.schemas import parse_capture_request, physics_layout, slot

from .. import mjcf_scan, physics, rendering
from ..base import Engine, EngineFault
from . import kinematics, mapping
from .kinematics import Kinematics
from .options import Options


class IsaacGymEngine(Engine):
    # engines/isaacgym/physics.py (which imports the SDK, so it is named here)
    physics_quantities = ("friction", "mass", "damping", "armature", "gain", "push")

    def __init__(self):
        self.slots = {}
        self.physics: Any = None
        self.io: Any = None  # planes.HostSlots or DeviceSlots, from attach
        self.images = ArenaCache(keep=1)  # the host's capture arena

    def init(self, spec, worker):
        # Models given as XML text are written here for the importers, which read files;
        # every reader is done when init returns, so a worker killed later leaves nothing.
        with tempfile.TemporaryDirectory(prefix="unisim-isaacgym-") as folder:
            return self._init(spec, worker, folder)

    def _init(self, spec, worker, folder):
        num_envs = int(spec["num_envs"])
        first = int(spec.get("first_env", 0))
        options = Options(spec.get("options"), int(spec.get("total_envs", num_envs)),
                          range(first, first + num_envs))
        if options.choose_plane(spec) == "cuda":
            from unisim_protocol.cuda_driver import driver  # the worker's ctypes binding of libcuda

            options.place_on(driver().ordinal_of(spec["device"]["uuid"]))
        else:
            options.use_host_device(spec)
        # The worker checks this before a CUDA ATTACH: only GPU tensors can be shared.
        self.device_resident = options.pipeline == "gpu"
        if not spec.get("model"):
            raise ValueError("the isaacgym engine needs a model: Backend('isaacgym', model=...)")
        scenes = [_scan(source, folder, i)
                  for i, source in enumerate([spec["model"], *options.variants])]
        for scene in scenes:
            mapping.check_bounds(scene)
        mapping.check_variant_layouts([mapping.layout_signature(s) for s in scenes],
                                      [s.path for s in scenes])
        assignment = mapping.variant_assignment(options.assignment, num_envs, len(scenes))
        keyframe = spec.get("keyframe")
        initial = [scene.initial_state(keyframe) for scene in scenes]
        self.initial_qpos = np.array([initial[v][0] for v in assignment])
        self.initial_qvel = np.array([initial[v][1] for v in assignment])

        worker.progress(0, num_envs, "importing IsaacGym (the first run compiles gymtorch)")
        from .sim import IsaacSim  # the SDK, lazily: isaacgym, then torch

        self.sim = IsaacSim(scenes, assignment, options, worker.progress)
        self.assignment = np.array(assignment)
        warnings: List[str] = []
        self.kinematics = None
        try:
            self.kinematics = Kinematics([s.path for s in scenes], self.sim.body_names,
                                         self.sim.variant_coms)
        except ImportError:
            warnings.append(kinematics.MISSING)
        self._stage(np.arange(num_envs), self.initial_qpos, self.initial_qvel)
        scene = scenes[0]
        for source in list(scenes) + list(self.sim.drives):
            warnings.extend(w for w in source.warnings if w not in warnings)
        slots = [
            slot("ctrl", "<f8", [len(scene.actuators)]),
            slot("qpos", "<f8", [scene.nq]),
            slot("qvel", "<f8", [scene.nv]),
            slot("body_states", "<f4", [self.sim.nbody, 13]),
            slot("contact_forces", "<f4", [self.sim.nbody, 3]),
        ]
        if options.viewer:
            slots.append(slot("viewer_open", "|u1", []))
        if spec.get("physics"):
            from .physics import IsaacPhysics

            if self.device_resident and options.choose_plane(spec) == "cuda":
                raise ValueError("physics randomisation on IsaacGym reads its draws from host "
                                 "memory: use data_plane='shm' with it")
            self.physics = IsaacPhysics(self.sim, scenes, spec["physics"])
            slots += physics.slots(spec["physics"])
        return physics_layout(
            engine="isaacgym", engine_version="Preview 4",
            stepper="%s pipeline" % options.pipeline, num_envs=num_envs,
            nq=scene.nq, nv=scene.nv, nu=len(scene.actuators), nbody=self.sim.nbody,
            timestep=scene.timestep,
            joint_names=[joint.name for joint in scene.joints],
            actuator_names=[actuator.name for actuator in scene.actuators],
            body_names=self.sim.body_names, keyframes=scene.keyframes,
            ctrl_range=[list(a.ctrl_range) if a.ctrl_range else [-np.inf, np.inf]
                        for a in scene.actuators],
            slots=slots,
            report=mapping.configuration_report(
                self.sim.sim_report(), options.pipeline, self.sim.report_variants,
                options.self_collision, scene.excludes, warnings))

    def attach(self, slots):
        from .planes import DeviceSlots, HostSlots

        self.slots = slots
        if isinstance(slots["ctrl"], np.ndarray):
            self.io = HostSlots(slots, self.sim.device)
        else:
            self.io = DeviceSlots(slots, self.sim.device)
        self.io.publish(self.sim.state())

    def step(self, substeps):
        self.io.begin()
        ctrl = self.io.ctrl()
        try:
            self.sim.step(ctrl, substeps)
        except Exception as exc:
            raise EngineFault("IsaacGym step failed: %s" % exc) from exc
        self.io.publish(self.sim.state())

    def reset(self, use_qpos, use_qvel):
        rows = np.flatnonzero(self.slots["reset_mask"])
        self.io.begin()
        qpos = self.io.read("qpos", rows) if use_qpos else self.initial_qpos[rows]
        qvel = self.io.read("qvel", rows) if use_qvel else self.initial_qvel[rows]
        self._stage(rows, qpos, qvel)
        state = self.sim.state()
        self.io.publish({"qpos": state["qpos"], "qvel": state["qvel"],
                         "body_states": state["body_states"]})

    def _stage(self, rows, qpos, qvel):
        """Stage a state for ``rows`` and give them the body states PhysX will only have
        after the next simulate (``kinematics``)."""
        self.sim.stage(rows, qpos, qvel)
        if self.kinematics is None:
            bodies = kinematics.nan_body_states(len(rows), self.sim.nbody)
        else:
            host = np.asarray(rows)
            bodies = self.kinematics.body_states(self.assignment[host], _host(qpos), _host(qvel))
        self.sim.write_body_states(rows, bodies)

    def randomize(self, parameters, push, resetting=False):
        """Apply the flagged rows' physics draws and pushes (engines/isaacgym/physics.py)."""
        rows = np.flatnonzero(self.slots["reset_mask"])
        if parameters and "physics" in self.slots:
            self.physics.apply(rows, self.slots["physics"])
        if push:
            self._stage(rows, *self.physics.pushed(rows, self.slots["push"]))
            state = self.sim.state()
            self.io.publish({"qpos": state["qpos"], "qvel": state["qvel"],
                             "body_states": state["body_states"]})

    def capture(self, request):
        """Render env ``env_id`` (this worker's row) into the image arena the request
        declares, packed ``(height, width, 3)`` from its start."""
        request = parse_capture_request(request)
        env = request["env_id"]
        if not 0 <= env < self.sim.num_envs:
            raise ValueError("CAPTURE env_id must be an env index in [0, %d), got %r"
                             % (self.sim.num_envs, env))
        if request.get("camera") is not None:
            raise ValueError(
                "IsaacGym renders with camera sensors of its own, not the MJCF's cameras: pass "
                "camera=None and aim with option camera {distance, elevation, azimuth}")
        if not self.sim.options.graphics:
            raise ValueError("this sim has no graphics device, so no camera: pass "
                             "options={'camera': {}} (or viewer=True) to the Backend")
        if env in self.sim.pending:
            raise ValueError(
                "env %d was reset (or built) since the last step, and IsaacGym renders a new "
                "state only after the next simulate (PhysX has no forward kinematics): step, "
                "then capture" % env)
        width, height = request.get("width"), request.get("height")
        rendering.check_size(width, height)
        rgb, _ = rendering.image_rows(self.images.views(request["image"])["rgb"], None, (0, 1),
                                      width, height)
        rgb[0] = self.sim.capture(env, width, height, self.sim.body_position(env, 0))
        return {}

    def close(self):
        if self.io is not None:
            self.io.close()  # waits for the copies still queued
        self.sim.close()


def _scan(source, folder, index):
    """Scan model ``index``; XML text is written to a file in ``folder`` first."""
    if source.lstrip().startswith("<"):
        path = os.path.join(folder, "model%d.xml" % index)
        with open(path, "w") as handle:
            handle.write(source)
        source = path
    return mjcf_scan.scan(source)


def _host(rows):
    """A numpy copy of rows that may be a tensor on the sim's device (the CUDA plane)."""
    return rows.cpu().numpy() if hasattr(rows, "cpu") else np.asarray(rows)


ENGINE = IsaacGymEngine
