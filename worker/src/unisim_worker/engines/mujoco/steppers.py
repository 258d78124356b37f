"""How the MuJoCo engine steps its envs: the strategy is chosen once (``stepper_for``),
from what the installed MuJoCo offers: ``mujoco.batch`` (MuJoCo 4: a C thread pool,
bit-identical to a loop over MjData) or a Python loop over every env's state in one
scratch ``MjData`` (MuJoCo 3.x, e.g. on 3.8); one env, on either, is stepped in its own
``MjData``. A stepper's ``bind(slots)`` is the worker's whole step: the worker calls it
directly, so a default STEP crosses only the worker loop and this module.
"""

import copy
import os
import reprlib
import stat

import numpy as np

from unisim_protocol.doorbell import MAX_CHUNKS, claim, valid_bounds
from unisim_protocol.schemas import slot

from ..base import EngineFault


def bound_step(stepper, slots):
    """``step(substeps)``: ``stepper``'s step over ``slots``, then its warnings, with the
    slots looked up once (at ATTACH) rather than on every step."""
    ctrl, qpos, qvel, out = slots["ctrl"], slots["qpos"], slots["qvel"], slots["warnings"]
    step, warnings = stepper.step, stepper.warnings

    def stepped(substeps):
        try:
            step(ctrl, substeps, qpos, qvel)
        except Exception as exc:
            raise EngineFault("MuJoCo step failed: %s" % exc) from exc
        warnings(out)

    return stepped


class LoopStepper:
    """Every env in one scratch ``MjData``, stepped in a Python loop (any MuJoCo 3.x;
    single-threaded), as ``mujoco.batch`` does in C.

    Each env's integration state (``mjSTATE_INTEGRATION``: everything ``mj_step`` reads,
    warm start included) is a row of ``states``, loaded into the scratch data, stepped and
    stored back: bit-identical to one MjData per env, but a step touches a few KB per env
    instead of a whole MjData (about 0.5 MB each for an ant under MuJoCo 3.2).
    """

    name = "loop"
    bind = bound_step

    def __init__(self, mujoco, model, num_envs, keyframe, threads):
        self.mujoco = mujoco
        self.model = model
        self.keyframe = keyframe
        self.spec = mujoco.mjtState.mjSTATE_INTEGRATION
        self.data = mujoco.MjData(model)
        self.states = np.zeros((num_envs, mujoco.mj_stateSize(model, self.spec)))
        self.raised = np.zeros(num_envs, dtype=np.uint8)  # warning bits since warnings()
        self._columns()
        # The scratch data's warning table (mjWarningStat: lastinfo, number) as contiguous
        # bytes: one comparison of ``warned()`` with ``clean`` per env step tells whether it
        # warned (``tobytes`` and ``==``: twice as fast as comparing the memoryview).
        self.table = warning_table(self.data)
        self.warned = memoryview(self.table).cast("B").tobytes
        self.clean = bytes(self.table.nbytes)
        self.models = [model] * num_envs  # one copy each once physics is randomised
        self.queue = None  # (fd, chunk bounds, warnings slot) once rows are shared
        self.reset_rows(range(num_envs), None, None)

    def state_slots(self):
        """The slots that hold every env's state when workers share rows."""
        return [slot("state", "<f8", [self.states.shape[1]]), slot("raised", "|u1", [])]

    def share(self, slots, fd, bounds, owner):
        """Keep the state in the shared ``slots`` (the ``owner`` fills them) and step the
        chunks claimed from the work queue ``fd``: chunk k is rows ``bounds[k]`` to
        ``bounds[k + 1]`` (``unisim_protocol.doorbell``)."""
        if owner:
            slots["state"][:] = self.states
            slots["raised"][:] = self.raised
        self.states, self.raised = slots["state"], slots["raised"]
        self._columns()
        self.queue = (fd, bounds, slots["warnings"])

    def _columns(self):
        """``qpos``, ``qvel`` and ``ctrl``: views of the columns of ``states`` that hold them
        (components in mjtState's bit order: time, qpos, qvel, act, warm start, ctrl, ...)."""
        mujoco, model, states = self.mujoco, self.model, self.states
        ctrl_at = mujoco.mj_stateSize(
            model, int(self.spec) & (int(mujoco.mjtState.mjSTATE_CTRL) - 1))
        self.qpos = states[:, 1:1 + model.nq]
        self.qvel = states[:, 1 + model.nq:1 + model.nq + model.nv]
        self.ctrl = states[:, ctrl_at:ctrl_at + model.nu]

    def own_models(self):
        """Give every env its own ``MjModel`` copy, for per-env physics parameters (in place:
        ``SingleStepper.bind`` holds the list)."""
        self.models[:] = [copy.copy(self.model) for _ in self.models]

    def step(self, ctrl, substeps, qpos, qvel):
        if self.queue is None:
            self.step_rows(0, len(self.states), ctrl, substeps)
            qpos[:] = self.qpos
            qvel[:] = self.qvel
            return
        fd, bounds, warnings = self.queue
        chunk = claim(fd)
        while chunk is not None:
            lo, hi = bounds[chunk], bounds[chunk + 1]
            self.step_rows(lo, hi, ctrl, substeps)
            qpos[lo:hi] = self.qpos[lo:hi]
            qvel[lo:hi] = self.qvel[lo:hi]
            warnings[lo:hi] = self.raised[lo:hi]  # what warnings() does for unshared rows
            self.raised[lo:hi] = 0
            chunk = claim(fd)

    def step_rows(self, lo, hi, ctrl, substeps):
        mujoco, data, spec = self.mujoco, self.data, self.spec
        set_state, get_state, mj_step = mujoco.mj_setState, mujoco.mj_getState, mujoco.mj_step
        warned, clean = self.warned, self.clean
        self.ctrl[lo:hi] = ctrl[lo:hi]  # loaded with each state: no numpy call per env
        for i, model, state in zip(range(lo, hi), self.models[lo:hi], self.states[lo:hi]):
            set_state(model, data, state, spec)
            mj_step(model, data, substeps)
            get_state(model, data, state, spec)
            if warned() != clean:
                self._collect_warnings(i)

    def _collect_warnings(self, i):
        self.raised[i] |= warning_bits(self.table[:, 1])
        self.table[:] = 0

    def warnings(self, out):
        """Write each env's warnings since the last call as a bitmask; clear them (shared
        rows: done chunk by chunk in ``step``)."""
        if self.queue is None:
            out[:] = self.raised
            self.raised.fill(0)  # a third of a slice assignment's cost, every step

    def reset_rows(self, ids, qpos, qvel):
        mujoco, data = self.mujoco, self.data
        for i in ids:
            model = self.models[i]
            if self.keyframe is None:
                mujoco.mj_resetData(model, data)
            else:
                mujoco.mj_resetDataKeyframe(model, data, self.keyframe)
            if qpos is not None:
                data.qpos[:] = qpos[i]
            if qvel is not None:
                data.qvel[:] = qvel[i]
            self.raised[i] = 0  # a reset clears an env's warnings, as mj_resetData does
            mujoco.mj_forward(model, data)
            if self.warned() != self.clean:
                self._collect_warnings(i)
            self.store(i)

    def load(self, i):
        """The scratch ``MjData``, holding env ``i``'s state (``store(i)`` keeps changes)."""
        self.mujoco.mj_setState(self.models[i], self.data, self.states[i], self.spec)
        return self.data

    def store(self, i):
        self.mujoco.mj_getState(self.models[i], self.data, self.states[i], self.spec)

    def set_const(self, i, keep_state):
        """``mj_setConst`` for env ``i``'s model, after its parameters changed. It overwrites
        the data it is given: ``keep_state`` reloads the env's state after it (not needed
        before a reset)."""
        mujoco, model = self.mujoco, self.models[i]
        mujoco.mj_setConst(model, self.load(i))
        if keep_state:
            mujoco.mj_forward(model, self.load(i))
            self.store(i)

    def publish(self, ids, qpos, qvel):
        qpos[ids] = self.qpos[ids]
        qvel[ids] = self.qvel[ids]

    def get_data(self, i, out):
        """Load env ``i``'s state (qpos, qvel, act, mocap, ...) into the MjData ``out``."""
        self.mujoco.mj_setState(self.model, out, self.states[i], self.spec)


class SingleStepper(LoopStepper):
    """One env, whose state stays in the scratch ``MjData`` between steps.

    One env is the latency-bound case (a gymnasium env), where a small model's step is
    mostly fixed costs: loading and storing the state takes 1.8 of the loop's 4 µs for a
    cartpole under MuJoCo 3.2, and ``mujoco.batch``'s dispatch about 1 of 3.6 µs under
    MuJoCo 4. The steps are the same, bit for bit (``mjSTATE_INTEGRATION`` is all that
    ``mj_step`` reads). ``qpos``, ``qvel`` and ``ctrl`` are (1, n) views of the data;
    the state goes to its row only where a caller needs it there. Never shares rows (one
    env has one worker).
    """

    name = "single"

    def _columns(self):
        data = self.data
        self.qpos, self.qvel, self.ctrl = data.qpos[None], data.qvel[None], data.ctrl[None]

    def bind(self, slots):
        """The step over ``slots``, down to its fixed costs: the copies go through byte
        memoryviews (about 40 ns each, where numpy takes 150-220 ns for rows this small) and
        everything is looked up once, here."""
        ctrl_in, qpos_out, qvel_out, warnings_out, ctrl_here, qpos_here, qvel_here = (
            byte_view(array) for array in (slots["ctrl"], slots["qpos"], slots["qvel"],
                                           slots["warnings"], self.ctrl, self.qpos, self.qvel))
        mj_step, models, data = self.mujoco.mj_step, self.models, self.data
        warned, clean, raised = self.warned, self.clean, memoryview(self.raised)

        def step(substeps):
            ctrl_here[:] = ctrl_in
            try:
                mj_step(models[0], data, substeps)
            except Exception as exc:
                raise EngineFault("MuJoCo step failed: %s" % exc) from exc
            if warned() != clean:
                self._collect_warnings(0)
            qpos_out[:] = qpos_here
            qvel_out[:] = qvel_here
            warnings_out[0] = raised[0]
            raised[0] = 0

        return step

    def step(self, ctrl, substeps, qpos, qvel):
        """Not the loop's, which would load a stale row: one env steps through ``bind``."""
        raise NotImplementedError("SingleStepper steps through bind(slots)")

    def set_const(self, i, keep_state):
        self.store(i)  # the row the base class reloads the state from
        LoopStepper.set_const(self, i, keep_state)

    def get_data(self, i, out):
        self.store(i)
        LoopStepper.get_data(self, i, out)


class BatchStepper:
    """``mujoco.batch.Batch`` on every core (MuJoCo 4)."""

    name = "batch"
    bind = bound_step

    def __init__(self, mujoco, model, num_envs, keyframe, threads):
        import mujoco.batch

        self.keyframe = -1 if keyframe is None else keyframe
        self.batch = mujoco.batch.Batch(model, nsim=num_envs, nthread=threads)
        self.ctrl = self.batch.bind("ctrl")
        self.qpos = self.batch.bind("qpos")
        self.qvel = self.batch.bind("qvel")
        self.table = self.batch.warning  # (nsim, mjNWARNING, 2): lastinfo, number
        self.counts = self.table[:, :, 1]  # the counters, writable
        self.reset_rows(np.arange(num_envs), None, None)

    def step(self, ctrl, substeps, qpos, qvel):
        self.ctrl[:] = ctrl
        self.batch.step(nstep=substeps)
        qpos[:] = self.qpos
        qvel[:] = self.qvel

    def warnings(self, out):
        """Write each env's warnings since the last call as a bitmask; clear the counters."""
        # Whether any env warned, in one vectorised pass over the contiguous table: 0.4 us
        # for one env, 32 us for 16k (a memoryview == bytes comparison, fastest for one
        # env, goes item by item: 2 ms for 16k, on the one thread while the others wait).
        if not np.count_nonzero(self.table):
            out.fill(0)  # a third of ``out[:] = 0``'s cost, on every step
            return
        out[:] = warning_bits(self.counts)
        self.table[...] = 0

    def reset_rows(self, ids, qpos, qvel):
        ids = np.asarray(ids, dtype=np.int64)
        self.batch.reset(ids, keyframe=self.keyframe, stage=0)
        if qpos is not None:
            self.qpos[ids] = qpos[ids]
        if qvel is not None:
            self.qvel[ids] = qvel[ids]
        self.batch.forward(ids)

    def publish(self, ids, qpos, qvel):
        qpos[ids] = self.qpos[ids]
        qvel[ids] = self.qvel[ids]

    def get_data(self, i, out):
        """Copy env ``i``'s state into the MjData ``out``."""
        self.batch.get_data(int(i), out)


def warning_names(mujoco):
    """Names of MuJoCo's warnings by bit (``mjWARN_BADCTRL`` -> ``badctrl``); MuJoCo 3.2
    has 8, MuJoCo 4 has 7, so the host learns them from the worker."""
    members = [(int(w), name) for name, w in mujoco.mjtWarning.__members__.items()
               if name != "mjNWARNING"]
    return [name[len("mjWARN_"):].lower() for _, name in sorted(members)]


def stepper_for(mujoco, num_envs, queue):
    """The stepper class: one env alone in its ``MjData``; else MuJoCo 4's batch where
    there is one, or the Python loop."""
    if num_envs == 1 and queue is None:
        return SingleStepper
    return BatchStepper if _has_batch(mujoco) else LoopStepper


def byte_view(array):
    """The bytes of ``array`` as a writable memoryview over its memory."""
    if not array.flags.c_contiguous:  # reshape would copy, and writes would go nowhere
        raise ValueError("a byte view needs a C-contiguous array")
    return memoryview(array.reshape(-1)).cast("B")  # 1-D first: a cast refuses an empty 2-D


def warning_table(data):
    """``data.warning`` as a writable (mjNWARNING, 2) int32 view: lastinfo, number."""
    lastinfo = data.warning.lastinfo
    return np.lib.stride_tricks.as_strided(lastinfo, shape=(len(lastinfo), 2),
                                           strides=(lastinfo.strides[0], lastinfo.itemsize))


def warning_bits(counts):
    """Bitmask (uint8) of the nonzero warning counters along the last axis."""
    raised = np.asarray(counts) > 0
    return (raised * (1 << np.arange(raised.shape[-1]))).sum(axis=-1).astype(np.uint8)


def shared_queue(request, stepper, num_envs):
    """INIT's ``queue`` (workers sharing rows), checked; None when rows are not shared."""
    if request is None:
        return None
    if not isinstance(stepper, LoopStepper):
        raise ValueError("INIT queue: this MuJoCo steps on threads of its own (%s stepper), "
                         "so its workers do not share rows" % stepper.name)
    fd, bounds, owner = request.get("fd"), request.get("bounds"), request.get("owner")
    if not (isinstance(fd, int) and isinstance(owner, bool) and isinstance(bounds, list)
            and valid_bounds(bounds, num_envs)):
        raise ValueError("INIT queue must be {fd: int, bounds: [0, ..., %d] increasing, at "
                         "most %d chunks, owner: bool}, got %r"
                         % (num_envs, MAX_CHUNKS, reprlib.repr(request)))
    try:
        is_pipe = stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        is_pipe = False
    if not is_pipe:
        raise ValueError("INIT queue fd %d is not a pipe this worker inherited from the "
                         "host" % fd)
    return {"fd": fd, "bounds": bounds, "owner": owner}


def _has_batch(mujoco):
    try:
        import mujoco.batch  # noqa: F401
    except ImportError:
        return False
    return True

