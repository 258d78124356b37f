"""The IsaacGym engine's INIT options, checked before the SDK is touched.

Every option is optional; an unknown name or a wrong type is refused with the list of
what is accepted, so a typo never silently falls back to a default.
"""

import math

# PhysX solver settings a user may override, with their types (gymapi.PhysXParams fields).
PHYSX_FIELDS = {
    "solver_type": int,
    "num_position_iterations": int,
    "num_velocity_iterations": int,
    "num_threads": int,
    "contact_offset": float,
    "rest_offset": float,
    "bounce_threshold_velocity": float,
    "max_depenetration_velocity": float,
    "max_gpu_contact_pairs": int,
    "default_buffer_size_multiplier": float,
}
PHYSX_DEFAULTS = {"solver_type": 1, "num_position_iterations": 4, "num_velocity_iterations": 1,
                  "num_threads": 0}
CAMERA_FIELDS = {"width": int, "height": int, "envs": list, "distance": float,
                 "elevation": float, "azimuth": float}
CAMERA_DEFAULTS = {"width": 640, "height": 480, "envs": [0], "distance": 2.0,
                   "elevation": 20.0, "azimuth": 90.0}
PLANES = ("shm", "cuda")
TOP_FIELDS = ("pipeline", "device", "substeps", "env_spacing", "physx", "self_collision",
              "variants", "assignment", "viewer", "camera")


class Options:
    """Checked options; attributes named as in ``TOP_FIELDS``.

    ``num_envs`` counts the backend's envs, of which this worker runs ``local`` (a
    ``range``, default all): camera env indices and the variant assignment are global.
    """

    def __init__(self, raw, num_envs, local=None):
        raw = dict(raw or {})
        local = range(num_envs) if local is None else local
        unknown = sorted(set(raw) - set(TOP_FIELDS))
        if unknown:
            raise ValueError("unknown isaacgym option(s) %s; accepted: %s"
                             % (", ".join(unknown), ", ".join(TOP_FIELDS)))
        self.pipeline = raw.get("pipeline", "gpu")
        if self.pipeline not in ("gpu", "cpu"):
            raise ValueError("option pipeline must be 'gpu' or 'cpu', got %r" % (self.pipeline,))
        self.device = _integer(raw.get("device", 0), "device", 0)
        self.device_given = "device" in raw
        self.substeps = _integer(raw.get("substeps", 1), "substeps", 1)
        self.env_spacing = _positive(raw.get("env_spacing", 2.0), "env_spacing")
        self.physx = _fields(raw.get("physx"), PHYSX_FIELDS, PHYSX_DEFAULTS, "physx")
        self.self_collision = _boolean(raw.get("self_collision", False), "self_collision")
        self.variants = [str(v) for v in raw.get("variants") or []]
        self.assignment = raw.get("assignment")
        if self.assignment is not None and not self.variants:
            raise ValueError("option assignment needs option variants (further MJCF files)")
        if self.assignment is not None:
            if not isinstance(self.assignment, list) or len(self.assignment) != num_envs:
                raise ValueError("option assignment must list one variant index per env (%d), "
                                 "got %r" % (num_envs, self.assignment))
            self.assignment = self.assignment[local.start:local.stop]
        self.viewer = _boolean(raw.get("viewer", False), "viewer")
        camera = raw.get("camera")
        self.camera = None
        if camera is not None:
            self.camera = _fields(camera, CAMERA_FIELDS, CAMERA_DEFAULTS, "camera")
            for env in self.camera["envs"]:
                if isinstance(env, bool) or not isinstance(env, int) or not 0 <= env < num_envs:
                    raise ValueError("camera envs must be env indices in [0, %d), got %r"
                                     % (num_envs, env))
            # this worker's own rows, by local index
            self.camera["envs"] = [env - local.start for env in self.camera["envs"]
                                   if env in local]
            for side in ("width", "height"):
                if not 1 <= self.camera[side] <= 8192:
                    raise ValueError("camera %s must be in [1, 8192], got %r"
                                     % (side, self.camera[side]))
        if self.viewer and len(local) != num_envs:
            raise ValueError(
                "option viewer opens one window per worker, and this backend has several "
                "(this one runs envs %d..%d of %d): pass workers=1 (one sim, one viewer)"
                % (local.start, local.stop - 1, num_envs))

    def choose_plane(self, spec):
        """The data plane of the INIT payload (``"shm"`` or ``"cuda"``), checked to fit.

        The CUDA plane keeps the state on the GPU, which only the GPU pipeline has.
        """
        plane = spec.get("data_plane", "shm")
        if plane not in PLANES:
            raise ValueError("INIT data_plane must be one of %s, got %r" % (PLANES, plane))
        if plane == "cuda" and self.pipeline != "gpu":
            raise ValueError(
                "data_plane='cuda' shares GPU memory with the sim, but this sim asks for "
                "pipeline='cpu' (CPU PhysX, state tensors in host memory): use "
                "options={'pipeline': 'gpu'}, or data_plane='shm'")
        uuid = (spec.get("device") or {}).get("uuid") if plane == "cuda" else b""
        if not isinstance(uuid, bytes):
            raise ValueError("INIT data_plane='cuda' needs device.uuid (the 16-byte UUID of the "
                             "arena's GPU), got %r" % (spec.get("device"),))
        return plane

    def use_host_device(self, spec):
        """Run on the host's ``Backend(device=N)`` (INIT ``device.ordinal``) unless option
        ``device`` says otherwise; naming two different GPUs is an error."""
        ordinal = (spec.get("device") or {}).get("ordinal")
        if ordinal is None:
            return
        if self.device_given and self.device != ordinal:
            raise ValueError(
                "option device is %d but Backend(device=%d) names another GPU: give one of "
                "them, or the same GPU in both" % (self.device, ordinal))
        self.device = int(ordinal)

    def place_on(self, ordinal):
        """Run the sim on GPU ``ordinal`` (this process's numbering of the CUDA arena's GPU)."""
        if self.device_given and self.device != ordinal:
            raise ValueError(
                "option device is %d, but the CUDA arena is on this process's GPU %d (the "
                "host's device=); the sim must run where the arena is: drop option device "
                "or give Backend(device=...) the sim's GPU" % (self.device, ordinal))
        self.device = ordinal

    @property
    def graphics(self):
        """Whether a graphics context is needed: only for a viewer or cameras (on either
        pipeline: IsaacGymEnvs renders with ``sim_device=cpu`` and a graphics device)."""
        return self.viewer or self.camera is not None


def _integer(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError("option %s must be an int >= %d, got %r" % (name, minimum, value))
    return value


def _positive(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value <= 0:
        raise ValueError("option %s must be a positive finite number, got %r" % (name, value))
    return float(value)


def _boolean(value, name):
    if not isinstance(value, bool):
        raise ValueError("option %s must be true or false, got %r" % (name, value))
    return value


def _fields(raw, types, defaults, name):
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ValueError("option %s must be a map, got %r" % (name, raw))
    unknown = sorted(set(raw) - set(types))
    if unknown:
        raise ValueError("unknown %s field(s) %s; accepted: %s"
                         % (name, ", ".join(unknown), ", ".join(sorted(types))))
    values = dict(defaults)
    for key, value in raw.items():
        kind = types[key]
        ok = isinstance(value, kind) and not isinstance(value, bool)
        if kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value)
            value = float(value) if ok else value
        if not ok:
            raise ValueError("%s.%s must be %s, got %r" % (name, key, kind.__name__, value))
        values[key] = value
    return values
