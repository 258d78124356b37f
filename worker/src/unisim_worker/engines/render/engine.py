"""A render pool's worker: draws rows of states into rows of shared image slots.

INIT loads the model and reports the per-row state slots (qpos, mocap); the host builds
one arena of those plus the image slots (``rgb``, ``depth``: per row, ``max_image_size``
pixels, packed so that a batch of N images of H x W is one contiguous (N, H, W[, 3])
array) and ATTACHes it to every worker of the pool. RENDER names a row range; the worker
renders each row's state (or a physics backend's qpos rows, from an arena declared in the
request) from a camera into those rows. Several workers share the arena, each its rows.
"""

from unisim_protocol.arena import ArenaCache
from unisim_protocol.schemas import parse_render_request, render_layout, slot

from .. import rendering
from ..base import Renderer
from ..mjmodel import load_model
from .appearance import AppearanceDraws


class RenderEngine(Renderer):
    def __init__(self):
        self.slots = {}
        self.frames = None
        self.randomizer = None
        self.sources = ArenaCache(keep=4)

    def init(self, spec, worker):
        mujoco = rendering.import_mujoco()
        model = load_model(mujoco, spec["model"])
        self.mujoco, self.model = mujoco, model
        self.data = mujoco.MjData(model)
        self.mocap0 = (self.data.mocap_pos.copy(), self.data.mocap_quat.copy())
        self.frames = rendering.FrameRenderer(mujoco, model)
        self.frames.prepare(64, 64)  # a missing GL device fails INIT, not the first render
        options = spec.get("options") or {}
        if options.get("randomizer") is not None:
            self.randomizer = AppearanceDraws(mujoco, model, options["randomizer"])
        cameras = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, i) or ""
                   for i in range(model.ncam)]
        return render_layout(
            engine_version=mujoco.__version__, nq=model.nq, nmocap=model.nmocap,
            cameras=cameras, qpos0=model.qpos0.copy(), mocap_pos0=self.mocap0[0],
            mocap_quat0=self.mocap0[1],
            slots=[slot("qpos", "<f8", [model.nq]), slot("mocap_pos", "<f8", [model.nmocap, 3]),
                   slot("mocap_quat", "<f8", [model.nmocap, 4])])

    def attach(self, slots):
        self.slots = slots

    def render(self, request):
        """Render rows ``[start, stop)`` into the image slots' rows of the same numbers.

        Without ``source``, row r's state is row r of this pool's state slots; with
        ``source`` (a physics backend's arena), row r's qpos is its qpos row r and mocap
        bodies keep their model positions.
        """
        request = parse_render_request(request)
        mujoco, model, data = self.mujoco, self.model, self.data
        start, stop = request["rows"]
        width, height = int(request["width"]), int(request["height"])
        camera = rendering.camera_id(mujoco, model, request.get("camera"))
        depth_slot = self.slots["depth"] if request.get("depth") else None
        rgb, depth = rendering.image_rows(self.slots["rgb"], depth_slot, (start, stop),
                                          width, height)
        if request.get("source") is not None:
            qpos = self.sources.views(request["source"])["qpos"]
            mocap = None
        else:
            qpos = self.slots["qpos"]
            mocap = (self.slots["mocap_pos"], self.slots["mocap_quat"])
        if not 0 <= start <= stop <= qpos.shape[0]:
            raise ValueError("rows [%d, %d) outside the %d state rows"
                             % (start, stop, qpos.shape[0]))
        randomize = bool(request.get("randomize"))
        if randomize and self.randomizer is None:
            raise ValueError("this pool was made without a randomizer")
        if mocap is None:
            data.mocap_pos[:], data.mocap_quat[:] = self.mocap0
        try:
            for i, row in enumerate(range(start, stop)):
                view = camera
                if randomize:
                    view = self._free_camera() if camera < 0 else camera
                    if self.randomizer.apply(int(request["call"]), row,
                                             view if camera < 0 else None):
                        self.frames.upload_textures()
                data.qpos[:] = qpos[row]
                if mocap is not None:
                    data.mocap_pos[:] = mocap[0][row]
                    data.mocap_quat[:] = mocap[1][row]
                mujoco.mj_forward(model, data)
                self.frames.render(data, view, rgb[i], None if depth is None else depth[i])
        finally:
            if self.randomizer is not None and self.randomizer.restore():
                self.frames.upload_textures()
        return {}

    def _free_camera(self):
        camera = self.mujoco.MjvCamera()
        camera.type = self.mujoco.mjtCamera.mjCAMERA_FREE
        self.mujoco.mjv_defaultFreeCamera(self.model, camera)
        return camera

    def close(self):
        if self.frames is not None:
            self.frames.close()


ENGINE = RenderEngine
