"""A fake engine with predictable physics that misbehaves on request (``unisim.testing``).

Dynamics, per env and per substep (nu <= nv <= nq)::

    qvel[:nu] += ctrl * dt;  qpos[:nv] += qvel * dt

The layout comes from the options (``nq``, ``nv``, ``nu``, ``*_names``, ``timestep``,
``qpos0``) or, when the INIT names a ``model``, from that MJCF file read as XML (no
MuJoCo needed): its joints, actuators, bodies, timestep and keyframes.

Physics randomisation (engines/physics.py) is accepted for every quantity, with names
checked against the layout's names (``geom_names`` from the options): the mock records
what it was asked in two slots users' tests can read, ``mock_physics`` (each env's
``physics`` row as last applied) and ``mock_physics_applied`` (applications per env), and
adds pushes to ``qvel[:, :6]`` (its first nv entries when nv < 6).

Faults are scripted by the host in the INIT options as a list of maps::

    {"command": "STEP", "call": 3, "action": "kill", ...}

``call`` counts that command's requests from 1 (INIT is call 1 of INIT). Actions:
``kill`` (``signal``, default SIGKILL), ``exit`` (``code``), ``segfault``, ``hang``
(``seconds``, default forever), ``slow`` (``seconds``, with ``progress`` frames every
``interval`` if true), ``raise`` (``message``, ``faulted``), ``garbage`` (``data``
bytes written on the protocol stream), ``print`` (``data`` written to fd 1 by libc).
"""

import ctypes
import os
import signal
import time

import numpy as np

from unisim_protocol.schemas import physics_layout, slot

from .. import physics
from ..base import Engine, EngineFault


class ScriptedError(RuntimeError):
    """The exception a ``raise`` fault throws."""

    def __init__(self, message, faulted):
        RuntimeError.__init__(self, message)
        self.faulted = faulted


class MockEngine(Engine):
    physics_quantities = ("friction", "mass", "damping", "stiffness", "armature", "gain",
                          "gravity", "push")

    def __init__(self):
        self.calls = {}
        self.faults = []
        self.worker = None
        self.slots = {}

    def init(self, spec, worker):
        options = spec.get("options") or {}
        self.worker = worker
        self.faults = list(options.get("faults", []))
        self._fault("INIT")
        layout = dict(options)
        if spec.get("model"):
            layout.update(_mjcf_layout(spec["model"], spec.get("keyframe")))
        elif spec.get("keyframe"):
            raise ValueError("the mock engine has keyframes only when given an MJCF model")
        nq = int(layout.get("nq", 2))
        nv = int(layout.get("nv", nq))
        nu = int(layout.get("nu", nv))
        if not 0 <= nu <= nv <= nq:
            raise ValueError("mock layout needs 0 <= nu <= nv <= nq, got nu=%d nv=%d nq=%d"
                             % (nu, nv, nq))
        self.nq, self.nv, self.nu = nq, nv, nu
        self.dt = float(layout.get("timestep", 0.01))
        self.num_envs = int(spec["num_envs"])
        self.initial_qpos = np.asarray(layout.get("qpos0", np.zeros(nq)), dtype=np.float64)
        self.initial_qvel = np.asarray(layout.get("qvel0", np.zeros(nv)), dtype=np.float64)
        if self.initial_qpos.shape != (nq,) or self.initial_qvel.shape != (nv,):
            raise ValueError("qpos0 must have %d values and qvel0 %d" % (nq, nv))
        options = layout
        spec = spec.get("physics")
        if spec:
            physics.resolve(spec, {
                "geoms": list(options.get("geom_names", [])),
                "bodies": list(options.get("body_names", [])),
                "joints": list(options.get("joint_names", [])),
                "actuators": list(options.get("actuator_names", []))})
        return physics_layout(
            engine="mock", engine_version="1", stepper="numpy", num_envs=self.num_envs,
            nq=nq, nv=nv, nu=nu, nbody=len(options.get("body_names", [])), timestep=self.dt,
            joint_names=options.get("joint_names", []),
            actuator_names=options.get("actuator_names", []),
            body_names=options.get("body_names", []), keyframes=options.get("keyframes", []),
            ctrl_range=options.get("ctrl_range", [[-1.0, 1.0]] * nu),
            slots=[slot("ctrl", "<f8", [nu]), slot("qpos", "<f8", [nq]),
                   slot("qvel", "<f8", [nv]), *self._physics_slots(spec)])

    @staticmethod
    def _physics_slots(spec):
        if not spec:
            return []
        return [*physics.slots(spec), slot("mock_physics", "<f8", [int(spec["columns"])]),
                slot("mock_physics_applied", "<i8", [])]

    def randomize(self, parameters, push, resetting=False):
        self._fault("PHYSICS")
        slots = self.slots
        rows = slots["reset_mask"].astype(bool)
        if parameters and "physics" in slots:
            slots["mock_physics"][rows] = slots["physics"][rows]
            slots["mock_physics_applied"][rows] += 1
        if push:
            width = min(physics.PUSH_WIDTH, self.nv)
            slots["qvel"][rows, :width] += slots["push"][rows, :width]

    def attach(self, slots):
        self._fault("ATTACH")
        self.slots = slots
        slots["qpos"][:] = self.initial_qpos
        slots["qvel"][:] = self.initial_qvel

    def step(self, substeps):
        self._fault("STEP")
        qpos, qvel, ctrl = self.slots["qpos"], self.slots["qvel"], self.slots["ctrl"]
        for _ in range(substeps):
            qvel[:, :self.nu] += ctrl * self.dt
            qpos[:, :self.nv] += qvel * self.dt

    def reset(self, use_qpos, use_qvel):
        self._fault("RESET")
        rows = self.slots["reset_mask"].astype(bool)
        if not use_qpos:
            self.slots["qpos"][rows] = self.initial_qpos
        if not use_qvel:
            self.slots["qvel"][rows] = self.initial_qvel

    def capture(self, request):
        self._fault("CAPTURE")
        raise NotImplementedError("the mock engine cannot render")

    def _fault(self, command):
        """Run the scripted fault for this call of ``command``, if any."""
        count = self.calls.get(command, 0) + 1
        self.calls[command] = count
        for fault in self.faults:
            if fault.get("command") == command and int(fault.get("call", 1)) == count:
                _ACTIONS[fault["action"]](self, fault)


def _mjcf_layout(model, keyframe):
    """The mock layout of an MJCF file, read as XML."""
    from ..mjcf_scan import scan

    scene = scan(model)
    qpos0, qvel0 = scene.initial_state(keyframe)
    return {
        "nq": scene.nq, "nv": scene.nv, "nu": len(scene.actuators),
        "timestep": scene.timestep,
        "joint_names": [joint.name for joint in scene.joints],
        "actuator_names": [actuator.name for actuator in scene.actuators],
        "body_names": ["world", *scene.bodies],
        "keyframes": sorted(scene.keyframes),
        "ctrl_range": [list(a.ctrl_range or (-1.0, 1.0)) for a in scene.actuators],
        "qpos0": np.asarray(qpos0, dtype=np.float64).tolist(),
        "qvel0": np.asarray(qvel0, dtype=np.float64).tolist(),
    }


def _kill(engine, fault):
    os.kill(os.getpid(), int(fault.get("signal", signal.SIGKILL)))
    time.sleep(10)  # a caught or ignored signal must not let the call carry on


def _exit(engine, fault):
    os._exit(int(fault.get("code", 3)))


def _segfault(engine, fault):
    ctypes.string_at(0)


def _hang(engine, fault):
    seconds = fault.get("seconds")
    deadline = None if seconds is None else time.monotonic() + float(seconds)
    while deadline is None or time.monotonic() < deadline:
        time.sleep(0.05)


def _slow(engine, fault):
    seconds = float(fault.get("seconds", 1.0))
    interval = float(fault.get("interval", 0.1))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(min(interval, max(0.0, end - time.monotonic())))
        if fault.get("progress"):
            engine.worker.progress(0, 0, "slow %s" % fault.get("command"))


def _raise(engine, fault):
    message = fault.get("message", "scripted failure")
    if fault.get("faulted"):
        raise EngineFault(message)
    raise ScriptedError(message, False)


def _garbage(engine, fault):
    engine.worker.writer.write_raw(bytes(fault.get("data", b"not a frame\n")))


def _print(engine, fault):
    data = bytes(fault.get("data", b"hello from C on fd 1\n"))
    ctypes.CDLL(None).write(1, data, len(data))


_ACTIONS = {
    "kill": _kill, "exit": _exit, "segfault": _segfault, "hang": _hang, "slow": _slow,
    "raise": _raise, "garbage": _garbage, "print": _print,
}


ENGINE = MockEngine
