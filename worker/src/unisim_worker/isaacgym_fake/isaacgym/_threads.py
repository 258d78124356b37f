"""The threads a sim's MuJoCo calls run on: by default one per core this process may run on.

Chunks of envs are stepped on them, each chunk's calls in one foreign call that holds no
GIL (``_native``), while the Python between the calls runs on the calling thread
(``_step``). Each env has its own MjModel and MjData and no env reads another's,
so a step's results are the same, bit for bit, whatever the number of threads and
whichever thread steps which env.

``UNISIM_FAKE_THREADS=N`` sets the number of threads (1: the calling thread alone). It is
read at each ``simulate``, so a change takes effect at the next step. Unset, the number is
the count of cores in the process's affinity mask (``os.sched_getaffinity``), so a worker
pinned to some cores uses those.
"""

import os
from concurrent.futures import ThreadPoolExecutor

from ._errors import FakeError

VARIABLE = "UNISIM_FAKE_THREADS"


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
    """Threads that run the calls handed to them (``submit``), started on first need and
    kept for the next step."""

    def __init__(self):
        self.executor = None
        self.size = 0  # threads the executor may run

    def threads(self):
        """The threads to step on now (``count()``), started if more are needed."""
        threads = count()
        if threads > 1 and threads > self.size:
            self.close()
            self.executor = ThreadPoolExecutor(threads, "unisim-fake-step")
            self.size = threads
        return threads

    def submit(self, function, *args):
        """``function(*args)`` on a thread of the pool; returns a callable that waits for it
        and raises what it raised."""
        return self.executor.submit(function, *args).result

    def close(self):
        if self.executor is not None:
            self.executor.shutdown(wait=True)
        self.executor, self.size = None, 0
