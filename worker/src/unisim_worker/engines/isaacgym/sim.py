"""Every gymapi call of the IsaacGym engine: one sim, one actor per env, tensor state.

Imported by ``IsaacGymEngine.init`` only (never at worker start): it imports IsaacGym
first and torch second, the order IsaacGym insists on. Type-checked with mypy against
the published ``isaacgym-stubs`` (see ``make lint``); never run here, since IsaacGym
cannot be installed on our CI machines.
"""

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, cast

# isort: off
from isaacgym import gymapi, gymtorch  # IsaacGym refuses to load after torch
import numpy as np
import torch
# isort: on

from . import mapping
from .options import CAMERA_DEFAULTS, Options

# Drive-mode codes in the order mapping.Drives expects (NONE, POS, VEL, EFFORT).
MODES = (int(gymapi.DOF_MODE_NONE), int(gymapi.DOF_MODE_POS), int(gymapi.DOF_MODE_VEL),
         int(gymapi.DOF_MODE_EFFORT))
PROGRESS_EVERY = 256


class IsaacSim:
    """The sim, its envs and the torch views of its state tensors."""

    def __init__(self, scenes: Sequence[Any], assignment: List[int], options: Options,
                 progress: Callable[[int, int, str], None]) -> None:
        self.options = options
        self.num_envs = len(assignment)
        self.assignment = assignment
        self.gpu = options.pipeline == "gpu"
        self.device = "cuda:%d" % options.device if self.gpu else "cpu"
        self.gym = gymapi.acquire_gym()
        self.sim = self._create_sim(scenes[0])
        self.viewer: Optional[gymapi.Viewer] = None
        self.cameras: Dict[Tuple[int, int, int], int] = {}  # (env, width, height) -> sensor
        self.pending: Set[int] = set()
        assets = [self._load_asset(scene) for scene in scenes]
        self.dof_names = [str(n) for n in self.gym.get_asset_dof_names(assets[0])]
        self.body_names = [str(n) for n in self.gym.get_asset_rigid_body_names(assets[0])]
        signatures = []
        for scene, asset in zip(scenes, assets):
            signatures.append(mapping.layout_signature(
                scene, self.gym.get_asset_dof_names(asset),
                self.gym.get_asset_rigid_body_names(asset)))
            if self.gym.get_asset_dof_count(asset) != len(scene.dof_joints):
                raise RuntimeError(
                    "IsaacGym imported %d DOFs from %s, whose MJCF has %d hinge/slide joints; "
                    "the importer merged or dropped joints" % (
                        self.gym.get_asset_dof_count(asset), scene.path, len(scene.dof_joints)))
        mapping.check_variant_layouts(signatures, [scene.path for scene in scenes])
        self.ndof = len(self.dof_names)
        self.nbody = int(self.gym.get_asset_rigid_body_count(assets[0]))
        self.dof_source = mapping.map_by_name(
            [joint.name for joint in scenes[0].dof_joints], self.dof_names, "DOFs")
        self.drives = [mapping.Drives(scene, self.dof_names, MODES) for scene in scenes]
        self.props = [drives.fill(self.gym.get_asset_dof_properties(asset))
                      for drives, asset in zip(self.drives, assets)]
        self.envs: List[gymapi.Env] = []
        self.actors: List[int] = []
        self._create_envs(scenes, assets, progress)
        origins = [self.gym.get_env_origin(env) for env in self.envs]
        bodies = [self.gym.get_actor_rigid_body_properties(env, actor)
                  for env, actor in zip(self.envs, self.actors)]
        if scenes[0].root_body not in self.body_names:
            raise RuntimeError("IsaacGym imported bodies %s from %s, without its root body %r"
                               % (self.body_names, scenes[0].path, scenes[0].root_body))
        root = self.body_names.index(scenes[0].root_body)
        self.arrays = mapping.TorchArrays(torch, self.device)
        self.state_map = mapping.StateMap(
            scenes[0].free_root, self.dof_source,
            [[o.x, o.y, o.z] for o in origins],
            [[b[root].com.x, b[root].com.y, b[root].com.z] for b in bodies], self.arrays)
        self.ctrl_map = mapping.CtrlMap(self.drives, assignment, self.arrays)
        self.nq, self.nv = scenes[0].nq, scenes[0].nv
        # Centres of mass of every body, body frame, per variant (first env of each).
        self.variant_coms = [[[b.com.x, b.com.y, b.com.z] for b in bodies[assignment.index(v)]]
                             if v in assignment else [[0.0, 0.0, 0.0]] * self.nbody
                             for v in range(len(scenes))]
        if not self.gym.prepare_sim(self.sim):
            raise RuntimeError("IsaacGym prepare_sim failed; its log on stderr says why")
        self._acquire_tensors()
        self.report_variants = self._variant_report(scenes, bodies)
        if self.options.viewer:  # after prepare_sim, as IsaacGymEnvs' VecTask.set_viewer
            self._open_viewer()

    # -- setup ------------------------------------------------------------------------

    def _create_sim(self, scene: Any) -> gymapi.Sim:
        params = gymapi.SimParams()
        params.dt = float(scene.timestep)
        params.substeps = self.options.substeps
        params.up_axis = gymapi.UP_AXIS_Z
        params.gravity = gymapi.Vec3(*[float(g) for g in scene.gravity])
        params.use_gpu_pipeline = self.gpu
        params.physx.use_gpu = self.gpu
        for name, value in self.options.physx.items():
            setattr(params.physx, name, value)
        graphics = self.graphics_device = self.options.device if self.options.graphics else -1
        sim = self.gym.create_sim(self.options.device, graphics, gymapi.SIM_PHYSX, params)
        if sim is None:
            raise RuntimeError(
                "IsaacGym create_sim failed (device %d, %s pipeline, graphics device %d); its "
                "log on stderr says why: check the GPU driver with nvidia-smi, or use "
                "pipeline='cpu'" % (self.options.device, self.options.pipeline, graphics))
        plane = gymapi.PlaneParams()
        plane.normal = gymapi.Vec3(0.0, 0.0, 1.0)
        self.gym.add_ground(sim, plane)
        return sim

    def _load_asset(self, scene: Any) -> gymapi.Asset:
        options = gymapi.AssetOptions()
        options.fix_base_link = not scene.free_root
        options.default_dof_drive_mode = int(gymapi.DOF_MODE_NONE)
        options.linear_damping = 0.0  # MuJoCo bodies have no velocity damping
        options.angular_damping = 0.0
        root, name = os.path.split(scene.path)
        asset = self.gym.load_asset(self.sim, root, name, options)
        if asset is None:
            raise RuntimeError(
                "IsaacGym's MJCF importer could not load %s (its log on stderr says why). It "
                "supports primitive geoms only (sphere, capsule, box, cylinder, ellipsoid), "
                "one root body in <worldbody>, no <include>, and no meshes or tendons: simplify "
                "the model, or run the worker by hand to see the full importer log" % scene.path)
        return asset

    def _create_envs(self, scenes: Sequence[Any], assets: List[gymapi.Asset],
                     progress: Callable[[int, int, str], None]) -> None:
        half = self.options.env_spacing / 2.0
        lower = gymapi.Vec3(-half, -half, 0.0)
        upper = gymapi.Vec3(half, half, half)
        per_row = max(1, int(np.ceil(np.sqrt(self.num_envs))))
        actor_filter = 0 if self.options.self_collision else 1
        camera = self.options.camera
        for index, variant in enumerate(self.assignment):
            env = self.gym.create_env(self.sim, lower, upper, per_row)
            # The actor pose places the root body (IsaacGymEnvs' start_pose; the importer does
            # not add the MJCF root's pos): its MJCF pose, so a fixed base stands where the
            # MJCF puts it, and a free one starts there until the staged state applies.
            root = scenes[variant]
            pose = gymapi.Transform()
            pose.p = gymapi.Vec3(*[float(v) for v in root.root_pos])
            w, x, y, z = [float(v) for v in root.root_quat]
            pose.r = gymapi.Quat(x, y, z, w)
            # collision group = env index: envs never touch each other.
            actor = self.gym.create_actor(env, assets[variant], pose, scenes[variant].root_body,
                                          index, actor_filter)
            if not self.gym.set_actor_dof_properties(env, actor, self.props[variant]):
                raise RuntimeError("IsaacGym refused the DOF properties of env %d" % index)
            mapping.verify_readback(self.props[variant],
                                    self.gym.get_actor_dof_properties(env, actor), index)
            self.envs.append(env)
            self.actors.append(actor)
            if camera is not None and index in camera["envs"]:
                self._camera(index, camera["width"], camera["height"])
            if (index + 1) % PROGRESS_EVERY == 0 or index + 1 == self.num_envs:
                progress(index + 1, self.num_envs, "creating IsaacGym envs")

    def _open_viewer(self) -> None:
        viewer = self.gym.create_viewer(self.sim, gymapi.CameraProperties())
        if viewer is None:
            raise RuntimeError("IsaacGym could not open a viewer window (no display?); "
                               "drop option viewer and use sim.capture for video")
        self.gym.viewer_camera_look_at(viewer, self.envs[0], gymapi.Vec3(2.5, 2.5, 1.8),
                                       gymapi.Vec3(0.0, 0.0, 0.3))
        self.viewer = viewer
        self.out["viewer_open"].fill_(1)

    def _camera(self, env: int, width: int, height: int) -> int:
        """The camera sensor of env ``env`` with this image size, created on first use
        (also after ``prepare_sim``, as the peer seed's ``bind_renderer`` did)."""
        key = (env, width, height)
        if key not in self.cameras:
            properties = gymapi.CameraProperties()
            properties.width = width
            properties.height = height
            handle = self.gym.create_camera_sensor(self.envs[env], properties)
            if handle == gymapi.INVALID_HANDLE:
                raise RuntimeError("IsaacGym could not create a %dx%d camera in env %d"
                                   % (width, height, env))
            self.cameras[key] = handle
        return self.cameras[key]

    def _acquire_tensors(self) -> None:
        gym, sim = self.gym, self.sim
        self.root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        self.bodies = gymtorch.wrap_tensor(gym.acquire_rigid_body_state_tensor(sim))
        self.contacts = gymtorch.wrap_tensor(gym.acquire_net_contact_force_tensor(sim))
        self.dofs: Optional[torch.Tensor] = None
        if self.ndof:
            self.dofs = gymtorch.wrap_tensor(gym.acquire_dof_state_tensor(sim))
        size = self.num_envs * self.ndof
        self.position_targets = torch.zeros(size, dtype=torch.float32, device=self.device)
        self.efforts = torch.zeros(size, dtype=torch.float32, device=self.device)
        # What ``state`` publishes, computed in place on the sim's device.
        n = self.num_envs
        self.all_rows = torch.arange(n, device=self.device)
        self.body_origins = self.state_map.origins[:, None, :].to(torch.float32)
        self.out = {
            "qpos": torch.zeros((n, self.nq), dtype=torch.float64, device=self.device),
            "qvel": torch.zeros((n, self.nv), dtype=torch.float64, device=self.device),
            "body_states": torch.zeros((n, self.nbody, 13), dtype=torch.float32,
                                       device=self.device),
        }
        if self.options.viewer:  # 1 while the viewer window is open: the host's signal
            self.out["viewer_open"] = torch.zeros(n, dtype=torch.uint8, device=self.device)
        self.refresh()

    def _variant_report(self, scenes: Sequence[Any], bodies: List[Any]) -> List[Dict[str, Any]]:
        report = []
        for variant, scene in enumerate(scenes):
            env = self.assignment.index(variant) if variant in self.assignment else None
            entry: Dict[str, Any] = {"source": scene.path, "envs": self.assignment.count(variant),
                     "dof_names": list(self.dof_names),
                     "actuators": [{"name": a.name, "kind": a.kind, "joint": a.joint,
                                    "dof": self.dof_names.index(a.joint)}
                                   for a in scene.actuators]}
            if env is not None:
                dof = self.gym.get_actor_dof_properties(self.envs[env], self.actors[env])
                entry["dof"] = {field: np.asarray(dof[field]).tolist()
                                for field in mapping.DRIVE_FIELDS}
                entry["bodies"] = {
                    "names": list(self.body_names),
                    "mass": [float(b.mass) for b in bodies[env]],
                    "com": [[b.com.x, b.com.y, b.com.z] for b in bodies[env]],
                    "inertia": [[[row.x, row.y, row.z] for row in (b.inertia.x, b.inertia.y,
                                                                  b.inertia.z)]
                                for b in bodies[env]],
                }
            report.append(entry)
        return report

    def sim_report(self) -> Dict[str, Any]:
        """The sim parameters as the engine holds them."""
        params = cast(gymapi.SimParams, self.gym.get_sim_params(self.sim))
        physx = params.physx
        return {
            "dt": float(params.dt), "substeps": int(params.substeps),
            "gravity": [params.gravity.x, params.gravity.y, params.gravity.z],
            "use_gpu_pipeline": bool(params.use_gpu_pipeline),
            "solver": {"engine": "PhysX", "solver_type": int(physx.solver_type),
                       "num_position_iterations": int(physx.num_position_iterations),
                       "num_velocity_iterations": int(physx.num_velocity_iterations),
                       "contact_offset": float(physx.contact_offset),
                       "rest_offset": float(physx.rest_offset)},
            "device": self.options.device, "graphics_device": self.graphics_device,
            "env_spacing": self.options.env_spacing,
            "num_envs": self.num_envs,
            "actors": int(self.gym.get_sim_actor_count(self.sim)),
            "dofs": int(self.gym.get_sim_dof_count(self.sim)),
            "rigid_bodies": int(self.gym.get_sim_rigid_body_count(self.sim)),
        }

    # -- state ------------------------------------------------------------------------

    def refresh(self) -> None:
        gym, sim = self.gym, self.sim
        gym.refresh_actor_root_state_tensor(sim)
        if self.ndof:
            gym.refresh_dof_state_tensor(sim)
        gym.refresh_rigid_body_state_tensor(sim)
        gym.refresh_net_contact_force_tensor(sim)

    def stage(self, rows: np.ndarray, qpos: Any, qvel: Any) -> None:
        """Write qpos/qvel rows (arrays, or tensors on the sim's device) into the state
        tensors; the indexed setters run before the next step."""
        index = self.arrays.index(rows)
        root, dof = self.state_map.to_engine(index, qpos, qvel)
        if self.state_map.free_root:
            self.root[index] = root
        if self.dofs is not None:
            self.dofs.view(self.num_envs, self.ndof, 2)[index] = dof
        self.pending.update(np.asarray(rows).tolist())

    def write_body_states(self, rows: Any, states: np.ndarray) -> None:
        """Body states (env frame) of ``rows`` until the next refresh after a simulate:
        PhysX computes none before it (see ``kinematics``)."""
        index = self.arrays.index(rows)
        bodies = self.bodies.view(self.num_envs, self.nbody, 13)
        states = self.arrays.float32(states)
        states[:, :, 0:3] += self.body_origins[index]
        bodies[index] = states

    def _flush_resets(self) -> None:
        """One call per indexed setter per step, over the union of the envs reset since."""
        if not self.pending:
            return
        ids = torch.tensor(sorted(self.pending), dtype=torch.int32, device=self.device)
        self.pending = set()
        if self.state_map.free_root:
            self.gym.set_actor_root_state_tensor_indexed(
                self.sim, gymtorch.unwrap_tensor(self.root), gymtorch.unwrap_tensor(ids),
                len(ids))
        if self.dofs is not None:
            self.gym.set_dof_state_tensor_indexed(
                self.sim, gymtorch.unwrap_tensor(self.dofs), gymtorch.unwrap_tensor(ids),
                len(ids))

    def step(self, ctrl: torch.Tensor, substeps: int) -> None:
        """Controls in (``(num_envs, nu)`` float64 on the sim's device), ``substeps`` physics
        steps, tensors refreshed. Nothing here copies from the device to the host."""
        gym, sim = self.gym, self.sim
        ctrl_map = self.ctrl_map
        if self.ndof and len(self.drives[0].ctrl_dof):
            position, effort = ctrl_map.targets(ctrl)
            if position.shape[1]:
                targets = self.position_targets.view(self.num_envs, self.ndof)
                targets[:, ctrl_map.position_dofs] = position.to(torch.float32)
                gym.set_dof_position_target_tensor(sim, gymtorch.unwrap_tensor(
                    self.position_targets))
            if effort.shape[1]:
                forces = self.efforts.view(self.num_envs, self.ndof)
                forces[:, ctrl_map.effort_dofs] = effort.to(torch.float32)
                gym.set_dof_actuation_force_tensor(sim, gymtorch.unwrap_tensor(self.efforts))
        self._flush_resets()
        for _ in range(substeps):
            gym.simulate(sim)
            if not self.gpu:
                gym.fetch_results(sim, True)
        self.refresh()
        if self.viewer is not None:
            self._draw_viewer()

    def state(self) -> Dict[str, torch.Tensor]:
        """What the engine publishes, as tensors on the sim's device: ``qpos``/``qvel``
        (MuJoCo layout, float64), ``body_states`` (env frame) and ``contact_forces``."""
        n, out = self.num_envs, self.out
        dofs = self.dofs
        dof = torch.zeros((n, 0, 2), device=self.device) if dofs is None \
            else dofs.view(n, self.ndof, 2)
        self.state_map.from_engine(self.all_rows, self.root, dof, out["qpos"], out["qvel"])
        bodies = out["body_states"]
        bodies.copy_(self.bodies.view(n, self.nbody, 13))
        bodies[:, :, 0:3] -= self.body_origins
        state = {"qpos": out["qpos"], "qvel": out["qvel"], "body_states": bodies,
                 "contact_forces": self.contacts.view(n, self.nbody, 3)}
        if "viewer_open" in out:
            state["viewer_open"] = out["viewer_open"]
        return state

    def body_position(self, env: int, body: int) -> np.ndarray:
        """Position of ``body`` of env ``env`` in the env's frame (a host copy: not for steps)."""
        position = self.bodies.view(self.num_envs, self.nbody, 13)[env, body, 0:3]
        return (position - self.body_origins[env, 0]).cpu().numpy()

    # -- rendering --------------------------------------------------------------------

    def _draw_viewer(self) -> None:
        viewer = self.viewer
        assert viewer is not None
        if self.gym.query_viewer_has_closed(viewer):
            self.gym.destroy_viewer(viewer)
            self.viewer = None
            self.out["viewer_open"].fill_(0)
            return
        if self.gpu:
            self.gym.fetch_results(self.sim, True)
        self.gym.step_graphics(self.sim)
        self.gym.draw_viewer(viewer, self.sim, True)

    def capture(self, env: int, width: int, height: int, target: np.ndarray) -> np.ndarray:
        """One ``(height, width, 3)`` RGB frame of env ``env``, aimed at ``target`` (env
        frame) from the option camera's distance, elevation and azimuth."""
        camera: Dict[str, Any] = dict(self.options.camera or CAMERA_DEFAULTS)
        handle = self._camera(env, width, height)
        elevation = np.radians(camera["elevation"])
        azimuth = np.radians(camera["azimuth"])
        eye = np.asarray(target, dtype=np.float64) + camera["distance"] * np.array([
            np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth),
            np.sin(elevation)])
        self.gym.set_camera_location(handle, self.envs[env],
                                     gymapi.Vec3(*[float(v) for v in eye]),
                                     gymapi.Vec3(*[float(v) for v in target]))
        if self.gpu:
            self.gym.fetch_results(self.sim, True)
        self.gym.step_graphics(self.sim)
        self.gym.render_all_camera_sensors(self.sim)
        # RGBA rows of width * 4 bytes (IsaacGymEnvs reshapes it to (height, width, 4))
        image = np.asarray(self.gym.get_camera_image(self.sim, self.envs[env], handle,
                                                     gymapi.IMAGE_COLOR), dtype=np.uint8)
        return image.reshape(height, width, 4)[:, :, :3]

    def close(self) -> None:
        if self.viewer is not None:
            self.gym.destroy_viewer(self.viewer)
            self.viewer = None
        self.gym.destroy_sim(self.sim)
