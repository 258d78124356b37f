"""A user's IsaacGym task (legged_gym, IsaacGymEnvs) served as an engine: the task bridge.

INIT builds the task on this interpreter (``build``: its class by import path, its config,
``sys.path`` entries for the user's code, the sim device) and calls its ``reset``. The
layout has no MuJoCo state (``nq = nv = 0``): ``ctrl`` holds the actions (``nu`` of them,
within the task's action clip), and the task's outputs have slots of their own:
``episode_length`` (read back before each step, so the host may set it), then, adjacent
in this order so that the host copies them for its learner in one copy (``Backend.block``),
``obs``, ``rew``, ``terminated`` and ``truncated`` (the task's reset flags split by
``extras["time_outs"]``), then ``privileged_obs`` (if the task has them) and ``log`` (the
scalars of ``extras["episode"]``, in the first row alone; NaN when absent). The report's
``task`` entry gives the sizes the learners need.

A STEP is one call of the task's ``step``; it resets the envs it ends as the task itself
does. A RESET resets the flagged envs that are not at the start of an episode already
(``reset_idx``, then ``compute_observations``). Python 3.8.
"""

import contextlib
import inspect
import sys
import threading

import numpy as np

from unisim_protocol.schemas import physics_layout, slot

from ... import trace
from ..base import Engine
from . import build

LOG = "episode"  # the extras entry whose scalars go to the log slot


@contextlib.contextmanager
def _alive(worker, text, every=10.0):
    """A progress frame every ``every`` seconds while the task builds: each re-arms the
    host's setup deadline (60 s), which legged_gym's 4096 envs on the SDK fake outlast on a
    few cores. The frames stop before the block ends, so they never interleave with the
    reply or an error."""
    stop = threading.Event()

    def beat():
        while not stop.wait(every):
            worker.progress(0, 1, text)

    worker.progress(0, 1, text)
    thread = threading.Thread(target=beat, name="unisim-build-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


class TaskEngine(Engine):
    def __init__(self):
        self.worker = None
        self.task = None
        self.io = None
        self.slots = {}

    def init(self, spec, worker):
        num_envs = int(spec["num_envs"])
        if int(spec.get("total_envs", num_envs)) != num_envs:
            raise ValueError("a task is one sim: run it in one worker (workers=1)")
        options = spec.get("options") or {}
        device = _device(spec, options)
        self.device_resident = device != "cpu"
        self.worker = worker
        with _alive(worker, "building the task"):
            task, style = build.build(options, num_envs, device)
            self.task, self.style = task, style
            self.task_step = trace.timed(task.step, "task_step")
            if int(task.num_envs) != num_envs:
                raise ValueError("the task built %d envs, asked for %d"
                                 % (task.num_envs, num_envs))
            self.first = style.first(task)
        extras = self.first[4]
        episode = extras.get(LOG) or {}
        self.log_names = sorted(k for k, v in episode.items() if _number(v) is not None)
        import torch  # after the SDK, which the build imported

        self.log_row = torch.empty(len(self.log_names), dtype=torch.float32, device=task.device)
        self.known = set(episode)  # extras' names seen: carried, or reported once
        privileged = style.privileged_count(task)
        clip = float(getattr(task, "clip_actions", None) or np.inf)
        slots = [slot("ctrl", "<f4", [task.num_actions]), slot("qpos", "<f8", [0]),
                 slot("qvel", "<f8", [0]), slot("episode_length", "<i8", []),
                 # adjacent, in this order: the host copies a step's outputs in one copy
                 slot("obs", "<f4", [task.num_obs]), slot("rew", "<f4", []),
                 slot("terminated", "|b1", []), slot("truncated", "|b1", [])]
        if privileged:
            slots.append(slot("privileged_obs", "<f4", [privileged]))
        if self.log_names:
            slots.append(slot("log", "<f4", [len(self.log_names)]))
        # the slots this engine reads or writes (qpos and qvel are empty)
        self.names = [entry["name"] for entry in slots if entry["name"] not in ("qpos", "qvel")]
        name = "%s.%s" % (type(task).__module__, type(task).__name__)
        worker.progress(1, 1, "task built")
        import isaacgym  # imported by the build already

        sdk = "Preview 4 (the SDK fake)" if getattr(isaacgym, "FAKE", False) else "Preview 4"
        return physics_layout(
            engine="task", engine_version=sdk, stepper="%s on %s" % (style.name, device),
            num_envs=num_envs, nq=0, nv=0, nu=task.num_actions, nbody=0,
            timestep=float(task.dt), joint_names=[], actuator_names=[
                "action%d" % i for i in range(task.num_actions)], body_names=[], keyframes=[],
            ctrl_range=[[-clip, clip]] * task.num_actions, slots=slots,
            report={"task": {"class": name, "style": style.name, "device": device,
                             "num_obs": int(task.num_obs), "num_privileged_obs": privileged,
                             "num_actions": int(task.num_actions),
                             "max_episode_length": int(task.max_episode_length),
                             "dt": float(task.dt), "action_clip": clip,
                             "log_names": self.log_names}})

    def attach(self, slots):
        from .io import DeviceIO, HostIO

        self.slots = slots
        ours = {name: slots[name] for name in self.names}
        self.io = (HostIO if isinstance(slots["ctrl"], np.ndarray) else DeviceIO)(
            ours, self.task.device)
        self._publish(*self.first)
        self.first = None

    def step(self, substeps):
        if substeps != 1:
            raise ValueError("a task steps as its own config says (its decimation): STEP "
                             "substeps must be 1, got %d" % substeps)
        io, task = self.io, self.task
        io.begin()
        getattr(task, self.style.episode_length)[:] = io.read("episode_length")
        try:
            result = self.task_step(io.actions())
        except Exception as exc:  # the task's buffers are half-updated: say so
            exc.faulted = True
            raise
        self.worker.reply_near()  # its threads are done: only the outputs are left
        self._publish(*self.style.outputs(result))

    def reset(self, use_qpos, use_qvel):
        if use_qpos or use_qvel:
            raise ValueError("a task starts its episodes itself: RESET takes no qpos/qvel")
        import torch

        task = self.task
        self.io.begin()
        lengths = getattr(task, self.style.episode_length)
        rows = torch.as_tensor(np.flatnonzero(self.slots["reset_mask"]), device=lengths.device)
        started = rows[lengths[rows] != 0]  # those at step 0 already began a new episode
        if len(started):
            task.reset_idx(started, *_more_indices(task, started))
            if hasattr(task, "compute_observations"):  # HumanoidAMP's reset_idx computes them
                task.compute_observations()
        observations, privileged = (getattr(task, name, None)
                                    for name in self.style.observation_buffers)
        values = {"obs": observations, "episode_length": lengths}
        if "privileged_obs" in self.slots:
            values["privileged_obs"] = privileged
        self.io.publish(values)

    def _publish(self, observations, privileged, rewards, resets, extras):
        self.io.end_flags(resets, extras.get("time_outs"))
        values = {"obs": observations, "rew": rewards,
                  "episode_length": getattr(self.task, self.style.episode_length)}
        if "privileged_obs" in self.slots:
            values["privileged_obs"] = privileged
        if self.log_names:  # one row of scalars: the host reads the first row alone
            self.io.publish_row("log", self._log(extras.get(LOG) or {}))
        self.io.publish(values)

    def _log(self, episode):
        """The log row (NaN for a name absent now), on the task's device: a value's
        ``float()`` would wait for the GPU once per name. New names are reported once."""
        row = self.log_row
        row.fill_(np.nan)
        for k, name in enumerate(self.log_names):
            value = _number(episode.get(name))
            if value is not None:
                row[k] = value
        for name in episode.keys() - self.known:
            self.known.add(name)
            sys.stderr.write("unisim task bridge: extras[%r][%r] appeared after the first "
                             "reset; only names present then are carried\n" % (LOG, name))
        return row

    def close(self):
        if self.io is not None:
            self.io.close()


def _device(spec, options):
    """The sim device: the CUDA arena's GPU on that plane, else option ``sim_device``."""
    device = options.get("sim_device", "cpu")
    if not isinstance(device, str) or not (device == "cpu" or device.startswith("cuda")):
        raise ValueError("option sim_device must be 'cpu' or 'cuda:N', got %r" % (device,))
    if spec.get("data_plane", "shm") != "cuda":
        return device
    from unisim_protocol.cuda_driver import driver

    ordinal = driver().ordinal_of(spec["device"]["uuid"])
    if device not in ("cpu", "cuda", "cuda:%d" % ordinal):
        raise ValueError("option sim_device is %s, but the CUDA arena is on this process's GPU "
                         "%d: drop sim_device or give Backend(device=...) the sim's GPU"
                         % (device, ordinal))
    return "cuda:%d" % ordinal


def _number(value):
    """``value`` if it is one number: a float, or a tensor of one element (as a 0-d view,
    read without waiting for its device); else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    numel = getattr(value, "numel", None)
    return value.reshape(()) if numel is not None and numel() == 1 else None


ENGINE = TaskEngine


def _more_indices(task, started):
    """What ``reset_idx`` takes besides the envs to reset: IsaacGymEnvs' hand tasks
    (ShadowHand, AllegroHand, the Dextreme ones) take ``reset_idx(env_ids, goal_env_ids)``,
    the envs whose goal alone is due; a new episode resets its goal itself, so none."""
    parameters = [p for p in inspect.signature(task.reset_idx).parameters.values()
                  if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                         p.POSITIONAL_OR_KEYWORD)]
    return [started[:0]] * max(len(parameters) - 1, 0)
