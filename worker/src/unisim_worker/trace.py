"""What a request's handling does, for the measurements that ask (the default records
nothing: the worker's loop is the plain one and serving costs nothing more).

* ``UNISIM_TRACE_FILES=<folder>``: which source files it enters, the worker's half of the
  step-path measurement (docs/architecture.md, "The path of a step"). One JSON line per
  request in ``<folder>/<pid>.jsonl``: the command and the files of every Python function
  entered from the wait for the request to its reply, as ``sys.setprofile`` sees them.
* ``UNISIM_TRACE_TIMES=<folder>``: when its parts happened, the worker's half of
  ``benchmarks/latency/task_bridge_phases.py``. One JSON line per request rung on the
  doorbell, in a file named the same way: the command, ``woke`` (the request seen),
  ``replied`` (just before the reply is rung) and the spans that ``timed`` functions ran, as
  ``time.perf_counter()`` (CLOCK_MONOTONIC, which the host's reads too). The line is
  written after the reply.
"""

import json
import os
import sys
import time

from unisim_protocol import COMMAND_NAMES

ENV = "UNISIM_TRACE_FILES"
TIMES_ENV = "UNISIM_TRACE_TIMES"
SPANS = {}  # name: [start, end] of the ``timed`` calls in the request being served


def recorder():
    """None, or with ``UNISIM_TRACE_FILES`` or ``UNISIM_TRACE_TIMES`` set,
    ``record(serve_one, worker)``: serves one request and appends what it traces."""
    for variable, make in ((ENV, _files), (TIMES_ENV, _times)):
        folder = os.environ.get(variable)
        if folder:
            os.makedirs(folder, exist_ok=True)  # a missing one would fail after each reply
            return make(os.path.join(folder, "%d.jsonl" % os.getpid()))
    return None


def timed(function, name):
    """``function``, or with ``UNISIM_TRACE_TIMES`` set, ``function`` that notes when each
    call ran as span ``name`` of the request's line."""
    if not os.environ.get(TIMES_ENV):
        return function

    def spanned(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            SPANS[name] = [started, time.perf_counter()]

    return spanned


def _files(path):
    def record(serve_one, worker):
        files = set()

        def profile(frame, event, arg):
            if event == "call":
                files.add(frame.f_code.co_filename)

        sys.setprofile(profile)
        try:
            serve_one(worker)
        finally:
            sys.setprofile(None)
            line = {"command": COMMAND_NAMES.get(worker.command), "files": sorted(files)}
            with open(path, "a") as out:
                out.write(json.dumps(line) + "\n")

    return record


def _times(path):
    def record(serve_one, worker):
        SPANS.clear()
        serve_one(worker)
        woke = getattr(worker.requests, "woke_at", None)
        if woke is not None:  # rung on the doorbell (pipe requests carry no stamps)
            line = dict(SPANS, command=COMMAND_NAMES.get(worker.command), woke=woke,
                        replied=worker.requests.replied_at)
            with open(path, "a") as out:
                out.write(json.dumps(line) + "\n")

    return record
