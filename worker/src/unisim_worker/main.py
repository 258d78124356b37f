"""unisim worker: one engine behind the framed protocol on stdin/stdout.

Started by ``bootstrap.py``; Python 3.8+, stdlib + numpy + msgpack + the chosen
engine's SDK. Requests come from pipe frames until the host sends DOORBELL, from the
arena's doorbell line after that (chosen once); either way each goes through the one
handler table of ``Worker``, and only how it arrives and how its answer is announced
differ.
"""

import faulthandler
import os
import platform
import sys
import time
import traceback

import unisim_protocol as protocol
from unisim_protocol import arena, schemas
from unisim_protocol.doorbell import (  # the names a doorbell STEP touches, bound once
    CMD_STEP,
    COMMAND,
    HOST_WAITING,
    REPLY,
    REPLY_NEAR,
    REQUEST,
    REQUEST_NEAR,
    STATUS,
    STATUS_OK,
    STATUS_PIPE,
    SUBSTEPS,
    WORKER_WAITING,
)

from . import trace
from .engines import NAMES, capabilities, create
from .engines.base import Engine, Renderer


def take_over_stdio():
    """Keep the protocol on private duplicates of fds 0/1; point fd 1 at stderr.

    Done before any engine import, so C-library banners and stray prints land on
    stderr (and in the host's log) instead of corrupting frames.
    """
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return proto_in, proto_out


# -- where requests come from: pipe frames, or (after DOORBELL) the arena's doorbell line --

bell = protocol.doorbell
STEP, REPLY_FRAME = protocol.Command.STEP, protocol.Kind.REPLY  # one lookup each, per step
HOST_CHECK_EVERY = 0.5  # seconds between checks that the host lives, while asleep on the doorbell
SPIN_US = 100.0  # microseconds a worker spins for the next request before it sleeps


class PipeRequests:
    """Each request is a frame on the pipe; each answer a frame back.

    Between requests the worker polls the pipe for ``spin_seconds`` before its read blocks:
    a request that comes within the spin (a host that calls again at once) then costs no
    wake-up, the larger part of a pipe round trip.
    """

    def __init__(self, reader, spin_seconds):
        self.reader = reader
        self.spin_seconds = spin_seconds

    def serve_one(self, worker):
        """Wait for one request frame and answer it; ``StreamClosed`` at end of input."""
        self.reader.ready(self.spin_seconds)
        self.answer(worker)

    def reply_near(self):
        """Nothing to mark: the host waits on the pipe."""

    def answer(self, worker):
        """Read the request frame (blocking) and answer it."""
        body = self.reader.read()
        try:
            kind, request_id, command, payload = protocol.unpack(body)
            if kind != protocol.Kind.REQUEST or command is None:
                raise protocol.MessageError(
                    "worker accepts only REQUEST frames with a command, got %s"
                    % protocol.describe(kind, command))
        except Exception as exc:  # a bad message (not a bad frame): answered as data, under
            worker.send_error(exc)  # the last request's id
            return
        reply = worker.handle(request_id, command, payload)
        if reply is not None:
            worker.send(protocol.Kind.REPLY, reply)


class BellRequests:
    """Requests rung on a doorbell line: a STEP's arguments are words of the line, any other
    request is a frame on the pipe announced by the line. Errors still travel as frames."""

    def __init__(self, words, pipe, spin_seconds, spare_core):
        self.line = bell.Line(words)
        self.pipe = pipe
        # when the host's next request is due; ``spare_core``: see ``doorbell.Forecast``
        self.forecast = bell.Forecast(spin_seconds, spare_core)
        self.seen = words[REQUEST]  # the last request served
        self.replied_at = self.woke_at = time.perf_counter()
        self.host_pid = os.getppid()

    def serve_one(self, worker):
        line, words = self.line, self.line.words
        doze, spin = self.forecast.plan
        seq = line.await_change(REQUEST, self.seen, WORKER_WAITING, spin, HOST_CHECK_EVERY,
                                self.check_host, doze, REQUEST_NEAR)
        self.woke_at = time.perf_counter()  # (read by ``trace`` when it times requests)
        words[REQUEST_NEAR] = 0  # the request came: a mark for it is spent
        waited = self.woke_at - self.replied_at
        self.seen = seq
        if words[COMMAND] == CMD_STEP:  # on_step's work, its argument a word
            writer = worker.writer
            before = writer.written
            ok = worker.run(seq, STEP, worker.step, words[SUBSTEPS]) is not None
            if ok and worker.progress_sent is not None:  # it reported progress: the host
                worker.send(REPLY_FRAME, {})  # reads the pipe, so answer there too
            # Anything written during the step (its ERROR, its PROGRESS and REPLY frames, a
            # stray frame) is for the host to read now: it reads the pipe only if told so.
            words[STATUS] = STATUS_OK if writer.written == before else STATUS_PIPE
        else:
            self.pipe.answer(worker)  # its frame is on the pipe already
        self.replied_at = time.perf_counter()  # before the ring: the host may go on at once
        line.publish(REPLY, seq, HOST_WAITING)
        self.forecast.observe(waited)  # after the reply: off the host's critical path

    def reply_near(self):
        """Mark this request's reply near: a host asleep on it wakes and spins for it."""
        self.line.near(REPLY, REPLY_NEAR, HOST_WAITING)

    def check_host(self):
        """End if the host died (we were re-parented): nobody will ever ring again."""
        if os.getppid() != self.host_pid:
            raise protocol.StreamClosed("the host process is gone")


# -- the loop -----------------------------------------------------------------------------

# Seconds between PROGRESS frames: often enough to keep any deadline alive, seldom enough
# that a worker never fills its pipe while the host reads another worker of the pool (a
# full pipe would stall this worker until the host got to it).
PROGRESS_EVERY = 0.1


class Worker:
    """Message loop: takes requests, dispatches them to the engine, answers them."""

    def __init__(self, reader, writer):
        self.writer = writer
        self.requests = PipeRequests(reader, SPIN_US * 1e-6)  # BellRequests after DOORBELL
        self.engine = None
        self.physics_spec = None
        self.request_id = 0
        self.command = None
        self.progress_sent = None  # when the current request's last PROGRESS went out
        self.running = True
        commands = protocol.Command
        self.handlers = {
            commands.DESCRIBE: self.on_describe,
            commands.INIT: self.on_init,
            commands.ATTACH: self.on_attach,
            commands.STEP: self.on_step,
            commands.RESET: self.on_reset,
            commands.CAPTURE: self.on_capture,
            commands.PING: self.on_ping,
            commands.SHUTDOWN: self.on_shutdown,
            commands.DOORBELL: self.on_doorbell,
            commands.RENDER: self.on_render,
            commands.PHYSICS: self.on_physics,
        }
        self.slots = {}
        self.stepper = None  # a physics engine's step, once ATTACH gave it its slots

    def send(self, kind, payload):
        self.writer.write(protocol.pack(kind, self.request_id, self.command, payload))

    def progress(self, done, total, text=""):
        """Tell the host the current request is alive (re-arms its deadline); at most one
        frame per ``PROGRESS_EVERY``, and always the last one (``done == total``)."""
        now = time.monotonic()
        last = self.progress_sent
        if last is not None and now - last < PROGRESS_EVERY and done != total:
            return
        self.progress_sent = now
        self.send(protocol.Kind.PROGRESS,
                  schemas.request("PROGRESS", done=done, total=total, text=text))

    def reply_near(self):
        """The request's reply is near: an engine whose threads are done says so, so that a
        host asleep through their work wakes while the rest (the outputs) is done."""
        self.requests.reply_near()

    def hello(self):
        import numpy

        self.send(protocol.Kind.HELLO, schemas.request(
            "HELLO", protocol=protocol.VERSION, python=platform.python_version(),
            numpy=numpy.__version__, engines=list(NAMES), pid=os.getpid()))

    def serve(self):
        """Serve until SHUTDOWN or end-of-file on the pipe."""
        record = trace.recorder()  # None unless a UNISIM_TRACE_ variable asks for it
        try:
            if record is None:
                while self.running:
                    self.requests.serve_one(self)
            else:
                while self.running:
                    record(self.requests.serve_one, self)
        except protocol.StreamClosed:
            pass
        if self.engine is not None:
            self.engine.close()

    def handle(self, request_id, command, payload):
        """The reply payload of one request, or None when it failed (its ERROR frame sent)."""
        return self.run(request_id, command, self.handlers[command], payload)

    def run(self, request_id, command, handler, argument):
        """``handler(argument)``, the work of request ``request_id``: its reply payload, or
        None when it failed (its ERROR frame sent)."""
        self.request_id, self.command = request_id, command
        self.progress_sent = None  # a request's first PROGRESS frame always goes out
        try:
            return handler(argument)
        except Exception as exc:  # every failure crosses as data
            self.send_error(exc)
            return None

    def send_error(self, exc):
        self.send(protocol.Kind.ERROR, schemas.request(
            "ERROR", type=type(exc).__name__, message=str(exc),
            traceback=traceback.format_exc(), faulted=bool(getattr(exc, "faulted", False))))

    def require_engine(self, kind=None):
        """The engine, checked to be a ``kind`` (``Engine``, ``Renderer``) if given."""
        if self.engine is None:
            raise RuntimeError("no engine: send INIT first")
        if kind is not None and not isinstance(self.engine, kind):
            raise ValueError("%s is not a %s engine: %s cannot serve %s" % (
                type(self.engine).__name__, "physics" if kind is Engine else "render",
                type(self.engine).__name__,
                protocol.COMMAND_NAMES.get(self.command, self.command)))
        return self.engine

    def on_describe(self, payload):
        fields = schemas.read("DESCRIBE", payload)
        return {"capabilities": capabilities(fields["engine"], fields["options"],
                                             fields["num_envs"])}

    def on_init(self, payload):
        from .engines.physics import refuse_unsupported

        if self.engine is not None:
            raise RuntimeError("INIT was already done; start a new worker for a new scene")
        spec = schemas.read("INIT", payload)
        if spec["total_envs"] is None:  # this worker holds every env
            spec["total_envs"] = spec["first_env"] + spec["num_envs"]
        engine = create(spec["engine"])
        refuse_unsupported(spec["physics"], engine.physics_quantities, spec["engine"])
        layout = engine.init(spec, self)
        self.engine = engine
        self.physics_spec = spec["physics"]
        return layout

    def on_attach(self, payload):
        engine = self.require_engine()
        host, device = schemas.parse_attach_request(payload)
        slots = arena.attach(host)
        if device is not None:  # device-resident slots, shared by CUDA IPC
            from unisim_protocol.cuda_arena import DeviceMapping

            if not engine.device_resident:
                raise ValueError("engine %s keeps its state in host memory; use data_plane='shm'"
                                 % type(engine).__name__)
            slots.update(DeviceMapping(device).regions)
        engine.attach(slots)
        self.slots = slots
        if isinstance(engine, Engine):  # only once the engine holds the slots
            self.stepper = engine.step
        return {}

    def on_doorbell(self, payload):
        self.require_engine()
        fields = schemas.read("DOORBELL", payload)
        spin_us = SPIN_US if fields["spin_us"] is None else fields["spin_us"]
        self.requests = BellRequests(self.slots["doorbell"], self.requests, spin_us * 1e-6,
                                     fields["spare_core"])
        return {}

    def on_step(self, payload):
        return self.step(schemas.read("STEP", payload)["substeps"])

    def step(self, substeps):
        if substeps < 1:
            raise ValueError("STEP substeps must be at least 1, got %d" % substeps)
        if self.stepper is None:  # the one test on every step; the cause, only if it fails
            self.require_engine(Engine)
            raise RuntimeError("STEP before ATTACH: the engine has no slots to step in yet; "
                               "send ATTACH first")
        self.stepper(substeps)
        return {}

    def on_reset(self, payload):
        fields = schemas.read("RESET", payload)
        if fields["physics"]:
            self.require_physics().randomize(True, False, resetting=True)
        self.require_engine(Engine).reset(fields["qpos"], fields["qvel"])
        return {}

    def on_physics(self, payload):
        fields = schemas.read("PHYSICS", payload)
        self.require_physics().randomize(fields["parameters"], fields["push"])
        return {}

    def require_physics(self):
        engine = self.require_engine()
        if self.physics_spec is None:
            raise RuntimeError("no physics randomisation was declared at INIT")
        return engine

    def on_capture(self, payload):
        return self.require_engine(Engine).capture(payload)

    def on_render(self, payload):
        return self.require_engine(Renderer).render(payload)

    def on_ping(self, payload):
        return {}

    def on_shutdown(self, payload):
        self.running = False
        return {}


def main():
    faulthandler.enable()  # a native crash leaves its traceback in the host's crash report
    proto_in, proto_out = take_over_stdio()
    worker = Worker(protocol.FrameReader(proto_in), protocol.FrameWriter(proto_out))
    worker.hello()
    try:
        worker.serve()
    except protocol.FrameError as exc:
        sys.stderr.write("unisim worker: protocol stream from the host is corrupt: %s\n" % exc)
        return 2
    except BrokenPipeError:
        return 0  # the host went away; nothing left to tell it
    return 0
