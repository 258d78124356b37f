"""Where the worker's next request comes from: pipe frames, or the arena's doorbell line.

Chosen once: frames until the host sends DOORBELL, the doorbell line from then on. Either
way a request is ``(id, command, payload)`` answered by the worker's one handler table
(``Worker.handle``); only how it arrives and how its answer is announced differ.
"""

import os
import time

from unisim import protocol

bell = protocol.doorbell
SLICE = 0.5  # seconds between checks that the host is alive while asleep on the doorbell


class PipeRequests:
    """Each request is a frame on the pipe; each answer a frame back."""

    def __init__(self, reader):
        self.reader = reader

    def serve_one(self, worker):
        """Read one request frame and answer it; ``StreamClosed`` at end of input."""
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

    def __init__(self, words, pipe, spin_seconds):
        self.line = bell.Line(words)
        self.pipe = pipe
        self.forecast = bell.Forecast(spin_seconds)  # when the host's next request is due
        self.seen = int(words[bell.REQUEST])  # the last request served
        self.replied_at = time.perf_counter()
        self.host_pid = os.getppid()

    def serve_one(self, worker):
        line, words = self.line, self.line.words
        doze, spin = self.forecast.plan()
        seq = line.await_change(bell.REQUEST, self.seen, bell.WORKER_WAITING, spin, SLICE,
                                self.check_host, doze)
        self.forecast.observe(time.perf_counter() - self.replied_at)
        self.seen = seq
        if words[bell.COMMAND] == bell.CMD_STEP:
            payload = {"substeps": int(words[bell.SUBSTEPS])}
            ok = worker.handle(seq, protocol.Command.STEP, payload) is not None
            words[bell.STATUS] = bell.STATUS_OK if ok else bell.STATUS_ERROR
        else:
            self.pipe.serve_one(worker)
        line.publish(bell.REPLY, seq, bell.HOST_WAITING)
        self.replied_at = time.perf_counter()

    def check_host(self):
        """End if the host died (we were re-parented): nobody will ever ring again."""
        if os.getppid() != self.host_pid:
            raise protocol.StreamClosed("the host process is gone")
