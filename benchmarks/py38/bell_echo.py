"""The doorbell floor's far end: answer every request rung on a doorbell line at once.

Run by ``latency.py`` on the worker's interpreter (Python 3.8+) as
``python bell_echo.py <worker dir> <line file>``. It waits on the line as a
unisim worker does (a spin, then futex sleeps) and does no work, so a round trip costs the
handoff and the Python of waiting on both sides and nothing else. Request id 0xFFFFFFFF ends it.
"""

import mmap
import os
import sys

import numpy as np
from runner import install_packages

STOP = 0xFFFFFFFF


def main():
    worker_dir, path = sys.argv[1:3]
    install_packages(worker_dir)
    from unisim.protocol import doorbell as bell

    with open(path, "r+b") as f:
        mapping = mmap.mmap(f.fileno(), bell.LINE_BYTES)
    line = bell.Line(np.frombuffer(mapping, dtype="<u4"))
    parent = os.getppid()

    def check_host():
        if os.getppid() != parent:
            sys.exit("bell_echo.py: the host is gone")

    seen = line.words[bell.REQUEST]
    line.publish(bell.REPLY, seen, bell.HOST_WAITING)  # ready
    while seen != STOP:
        seen = line.await_change(bell.REQUEST, seen, bell.WORKER_WAITING, 100e-6, 0.5,
                                 check_host)
        line.publish(bell.REPLY, seen, bell.HOST_WAITING)


if __name__ == "__main__":
    main()
