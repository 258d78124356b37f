"""The far end of the doorbell floor and of the least Python steps.

Run by ``latency.py`` on the worker's interpreter (Python 3.8+) as
``python floor_peer.py <worker dir> <region file> [<model xml> doorbell|pipe]``. The region
holds a doorbell line, then (with a model) the env's ctrl, qpos and qvel as float64. It
waits on the line as a unisim worker does (a spin, then futex sleeps).

- Without a model: the doorbell floor. It answers every request at once, so a round trip
  costs the handoff and the Python of waiting on both sides and nothing else.
- With a model: the least step. For each request it copies ctrl into its ``MjData``, runs
  one ``mj_step`` and copies the state out, as a worker's single stepper does, inline, with
  none of unisim's layers (dispatch, checks, error records): what a Python worker on that
  transport cannot go below. The request is rung on the line (``doorbell``) or is a msgpack
  frame on stdin, answered by one on stdout (``pipe``), waited for as a worker waits on
  that transport (a spin, then a blocking read or a futex sleep).

Request id 0xFFFFFFFF on the line, or the end of stdin, ends it.
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
    from unisim_protocol import doorbell as bell
    from unisim_worker.main import HOST_CHECK_EVERY, SPIN_US

    spin = SPIN_US * 1e-6  # a unisim worker's spin for the next request

    with open(path, "r+b") as f:
        mapping = mmap.mmap(f.fileno(), 0)
    line = bell.Line(np.frombuffer(mapping, dtype="<u4", count=bell.WORDS))
    parent = os.getppid()

    def check_host():
        if os.getppid() != parent:
            sys.exit("floor_peer.py: the host is gone")

    region = memoryview(mapping)[bell.LINE_BYTES:]
    work = least_step(sys.argv[3], region) if len(sys.argv) > 3 else None
    seen = line.words[bell.REQUEST]
    line.publish(bell.REPLY, seen, bell.HOST_WAITING)  # ready
    if work is None:
        while seen != STOP:
            seen = line.await_change(bell.REQUEST, seen, bell.WORKER_WAITING, spin,
                                     HOST_CHECK_EVERY, check_host)
            line.publish(bell.REPLY, seen, bell.HOST_WAITING)
        return
    model, data, step, ctrl, ctrl_in, qpos, qpos_out, qvel, qvel_out = work
    if sys.argv[4] == "doorbell":
        while True:
            seen = line.await_change(bell.REQUEST, seen, bell.WORKER_WAITING, spin,
                                     HOST_CHECK_EVERY, check_host)
            if seen == STOP:
                return
            ctrl[:] = ctrl_in
            step(model, data)
            qpos_out[:] = qpos
            qvel_out[:] = qvel
            line.publish(bell.REPLY, seen, bell.HOST_WAITING)
    import msgpack

    from unisim_protocol import Kind, framing

    size = framing.HEADER.size
    requests = framing.FrameReader(0)  # for its wait only: the reads are plain
    while True:
        requests.ready(spin)
        chunk = os.read(0, 4096)  # the host writes a small frame in one write: it comes whole
        if not chunk:
            return
        _, request_id, command, _ = msgpack.unpackb(chunk[size:], raw=False)
        ctrl[:] = ctrl_in
        step(model, data)
        qpos_out[:] = qpos
        qvel_out[:] = qvel
        body = msgpack.packb([Kind.REPLY, request_id, command, None])
        os.write(1, framing.header(len(body)) + body)


def least_step(model_path, region):
    """The model, its ``MjData``, ``mj_step`` and the byte views a step copies between:
    ctrl and its source in ``region``, then qpos and qvel and their places there."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(model_path)
    data = mujoco.MjData(model)
    views = [model, data, mujoco.mj_step]
    at = 0
    for array in (data.ctrl, data.qpos, data.qvel):
        here = memoryview(array).cast("B")
        views += [here, region[at:at + len(here)]]
        at += len(here)
    return views


if __name__ == "__main__":
    main()
