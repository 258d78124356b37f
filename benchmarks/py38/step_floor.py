"""The least step's far end: a unisim STEP's work in the fewest lines of Python, over the
doorbell or over msgpack frames on the pipe.

Run by ``latency.py`` on the worker's interpreter (Python 3.8+) as
``python step_floor.py <worker dir> <region file> <model xml> doorbell|pipe``. The region
holds a doorbell line, then the env's ctrl, qpos and qvel as float64. For each request it
copies ctrl into its ``MjData``, runs one ``mj_step`` and copies the state out, as a
worker's single stepper does, inline, with none of unisim's layers (dispatch, checks,
error records): what a Python worker on that transport cannot go below. Request id
0xFFFFFFFF (doorbell) or the end of stdin (pipe) ends it.
"""

import mmap
import os
import sys

import msgpack
import mujoco
import numpy as np
from runner import install_packages

STOP = 0xFFFFFFFF
REPLY_KIND = 3  # protocol.Kind.REPLY


def main():
    worker_dir, path, model_path, transport = sys.argv[1:5]
    install_packages(worker_dir)
    from unisim.protocol import doorbell as bell
    from unisim.protocol import framing

    model = mujoco.MjModel.from_xml_path(model_path)
    data = mujoco.MjData(model)
    with open(path, "r+b") as f:
        mapping = mmap.mmap(f.fileno(), 0)
    line = bell.Line(np.frombuffer(mapping, dtype="<u4", count=bell.WORDS))
    region = memoryview(mapping)
    ctrl, qpos, qvel = (memoryview(a).cast("B") for a in (data.ctrl, data.qpos, data.qvel))
    at = bell.LINE_BYTES
    ctrl_in = region[at:at + len(ctrl)]
    at += len(ctrl)
    qpos_out = region[at:at + len(qpos)]
    at += len(qpos)
    qvel_out = region[at:at + len(qvel)]
    step = mujoco.mj_step
    parent = os.getppid()

    def check_host():
        if os.getppid() != parent:
            sys.exit("step_floor.py: the host is gone")

    seen = line.words[bell.REQUEST]
    line.publish(bell.REPLY, seen, bell.HOST_WAITING)  # ready
    if transport == "doorbell":
        while True:
            seen = line.await_change(bell.REQUEST, seen, bell.WORKER_WAITING, 100e-6, 0.5,
                                     check_host)
            if seen == STOP:
                return
            ctrl[:] = ctrl_in
            step(model, data)
            qpos_out[:] = qpos
            qvel_out[:] = qvel
            line.publish(bell.REPLY, seen, bell.HOST_WAITING)
    size = framing.HEADER.size
    while True:
        chunk = os.read(0, 4096)  # the host writes a small frame in one write: it comes whole
        if not chunk:
            return
        _, request_id, command, _ = msgpack.unpackb(chunk[size:], raw=False)
        ctrl[:] = ctrl_in
        step(model, data)
        qpos_out[:] = qpos
        qvel_out[:] = qvel
        body = msgpack.packb([REPLY_KIND, request_id, command, None])
        os.write(1, framing.header(len(body)) + body)


if __name__ == "__main__":
    main()
