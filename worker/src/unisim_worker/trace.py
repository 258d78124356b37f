"""Which source files a request's handling enters: the worker's half of the step-path
measurement (docs/architecture.md, "The path of a step").

With ``UNISIM_TRACE_FILES=<folder>`` in its environment, a worker appends one JSON line per
request it serves to ``<folder>/<pid>.jsonl``: the command and the files of every Python
function entered from the wait for the request to its reply, as ``sys.setprofile`` sees
them. Unset (the default), the worker's loop is the plain one: nothing is installed and
serving costs nothing more.
"""

import json
import os
import sys

from unisim_protocol import COMMAND_NAMES

ENV = "UNISIM_TRACE_FILES"


def recorder():
    """None, or with ``UNISIM_TRACE_FILES`` set, ``record(serve_one, worker)``: serves one
    request and appends the files its handling entered."""
    folder = os.environ.get(ENV)
    if not folder:
        return None
    path = os.path.join(folder, "%d.jsonl" % os.getpid())

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
