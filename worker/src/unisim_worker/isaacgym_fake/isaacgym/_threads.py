"""The threads a sim steps its envs on: by default one per core this process may run on.

MuJoCo releases the GIL in ``mj_step`` and ``mj_forward``, so envs stepped on several
threads run in parallel; the Python between those calls holds the GIL, which is why the
per-env Python of a step is kept short (``_env.EnvSim.simulate``). Each env has its own
MjModel and MjData and no env reads another's, so a step's results are the same, bit for
bit, whatever the number of threads and whichever thread steps which env.

``UNISIM_FAKE_THREADS=N`` sets the number of threads (1: the calling thread alone). It is
read at each ``simulate``, so a change takes effect at the next step. Unset, the number is
the count of cores in the process's affinity mask (``os.sched_getaffinity``), so a worker
pinned to some cores uses those.
"""

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from ._errors import FakeError

VARIABLE = "UNISIM_FAKE_THREADS"
CLAIMS = 2  # chunks per thread: few hand-overs of the GIL, and still a balanced end


def count():
    """The number of threads to step on now (see the module's docstring)."""
    value = os.environ.get(VARIABLE, "").strip()
    if not value:
        try:
            return len(os.sched_getaffinity(0))
        except (AttributeError, OSError):  # no affinity on this platform
            return os.cpu_count() or 1
    try:
        threads = int(value)
    except ValueError:
        threads = 0
    if threads < 1:
        raise FakeError("%s=%r: set it to a positive whole number of threads, or unset it to "
                        "step on every core this process may run on" % (VARIABLE, value))
    return threads


class Pool:
    """Runs a function over items on ``count()`` threads, the caller's among them; the
    helper threads are started on first need and kept for the next call."""

    def __init__(self):
        self.executor = None
        self.size = 0  # helper threads the executor may run

    def run(self, function, items):
        """``function(chunk)`` for consecutive chunks of ``items`` that together hold each
        item once, on ``count()`` threads (one chunk of all items on one thread); returns
        when all are done and raises the first error any of them raised."""
        threads = min(count(), len(items))
        if threads <= 1:
            if items:
                function(items)
            return
        if threads - 1 > self.size:
            self.close()
            self.executor = ThreadPoolExecutor(threads - 1, "unisim-fake-step")
            self.size = threads - 1
        size = -(-len(items) // (threads * CLAIMS))
        claims = itertools.count()  # next() on it is atomic under the GIL
        failed = threading.Event()

        def work():
            try:
                while not failed.is_set():
                    start = next(claims) * size
                    if start >= len(items):
                        return
                    function(items[start:start + size])
            except BaseException:
                failed.set()
                raise

        futures = [self.executor.submit(work) for _ in range(threads - 1)]
        try:
            work()
        finally:
            errors = [future.exception() for future in futures]  # waits for each
        for error in errors:
            if error is not None:
                raise error

    def close(self):
        if self.executor is not None:
            self.executor.shutdown(wait=True)
        self.executor, self.size = None, 0
