"""Frames per second of a RenderPool against a single-process mujoco.Renderer loop.

Both draw the same batch of quadruped poses, at each image size, with the model's own
render settings ("default": its shadows and 4x MSAA) and with shadows and MSAA off
("fast"). Within one size, the in-process loop and the pools take turns, round after
round, and the median time of each is reported (in-process MuJoCo speed drifts over
minutes on shared machines). Before timing, every pool's frames are checked equal to the
in-process ones. Run from the repository root, e.g.::

    MUJOCO_GL=egl python -m benchmarks.render.pool --workers 1,2 --sizes 64x64,128x128
    MUJOCO_GL=egl python -m benchmarks.render.pool --device-ids 0 --workers 1,2,4,8,16 --batch 256

``--name NAME`` publishes the tables as the block ``figures:NAME`` of the docs, with the
frame rates in its result file (tools/figures/doc_figures.py).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco
import numpy as np

import unisim
from tools.figures.doc_figures import invocation, publish, stamp
from unisim import models

FAST = '<visual><quality shadowsize="0" offsamples="0"/></visual>'


def model_xml(settings: str) -> str:
    """The quadruped's MJCF, with shadows and MSAA switched off for ``fast``."""
    xml = models.path("quadruped").read_text()
    if settings == "fast":
        xml = re.sub(r"(<mujoco[^>]*>)", r"\1" + FAST, xml, count=1)
    return xml


def poses(model: mujoco.MjModel, n: int) -> np.ndarray:
    """``n`` standing poses with random joint angles and base positions."""
    rng = np.random.default_rng(0)
    qpos = np.tile(model.key_qpos[0] if model.nkey else model.qpos0, (n, 1))
    qpos[:, :2] += rng.uniform(-0.3, 0.3, (n, 2))
    qpos[:, 7:] += rng.uniform(-0.4, 0.4, (n, model.nq - 7))
    return qpos


class InProcess:
    """The baseline: one mujoco.Renderer in this process, one pose after another."""

    def __init__(self, model: mujoco.MjModel, width: int, height: int, camera: str) -> None:
        self.model, self.camera = model, camera
        self.data = mujoco.MjData(model)
        self.renderer = mujoco.Renderer(model, height=height, width=width)
        self.out = np.empty((height, width, 3), np.uint8)

    def render(self, states: np.ndarray, keep: bool = False) -> list[np.ndarray]:
        frames = []
        for qpos in states:
            self.data.qpos[:] = qpos
            mujoco.mj_forward(self.model, self.data)
            self.renderer.update_scene(self.data, camera=self.camera)
            self.renderer.render(out=self.out)
            if keep:
                frames.append(self.out.copy())
        return frames


def seconds(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="64x64,128x128,256x256")
    parser.add_argument("--workers", default="1,2", help="workers per device, one pool each")
    parser.add_argument("--device-ids", default=None,
                        help="comma-separated EGL devices (default: EGL's default device)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settings", default="default,fast")
    parser.add_argument("--camera", default="track")
    parser.add_argument("--name", help="publish as figures:NAME in docs/benchmarks.md")
    args = parser.parse_args()
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    command = invocation()
    data: dict[str, Any] = {"fps": {}, "frames_equal": {}}
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    workers = [int(n) for n in args.workers.split(",")]
    devices = None if args.device_ids is None else [int(d) for d in args.device_ids.split(",")]
    largest = max(w * h for w, h in sizes)
    say(f"`{command}`: batch {args.batch}, camera {args.camera!r}, devices "
        f"{devices or 'EGL default'}, MUJOCO_GL={os.environ['MUJOCO_GL']}, mujoco "
        f"{mujoco.__version__}, {os.cpu_count()} CPUs, median of {args.rounds} rounds; "
        f"{stamp()}.")
    for settings in args.settings.split(","):
        xml = model_xml(settings)
        model = mujoco.MjModel.from_xml_string(xml)
        model.vis.global_.offwidth = max(w for w, _ in sizes)
        model.vis.global_.offheight = max(h for _, h in sizes)
        states = poses(model, args.batch)
        pools = {n: unisim.RenderPool(xml, device_ids=devices, n_workers_per_device=n,
                                      max_batch_size=args.batch, max_image_size=largest)
                 for n in workers}
        try:
            header = " | ".join(f"pool x{n * len(devices or [None])}" for n in workers)
            say(f"\n{settings} render settings (shadowsize {model.vis.quality.shadowsize}, "
                f"offsamples {model.vis.quality.offsamples}), frames/s:\n\n"
                f"| size | in-process | {header} | best / in-process |\n"
                + "|---" * (len(workers) + 3) + "|")
            for width, height in sizes:
                local = InProcess(model, width, height, args.camera)
                jobs: dict[str, Callable[[], Any]] = {"in-process": partial(local.render, states)}
                for n, pool in pools.items():
                    jobs[f"x{n}"] = partial(pool.render, width, height, states,
                                            camera=args.camera, copy=False)
                for job in jobs.values():  # warm-up: GL contexts for this size
                    job()
                check = states[:4]
                same = all(np.array_equal(np.array(local.render(check, keep=True)),
                                          pool.render(width, height, check, camera=args.camera))
                           for pool in pools.values())
                data["frames_equal"][f"{settings} {width}x{height}"] = same
                if not same:
                    say(f"WARNING: at {width}x{height} pool frames differ from in-process ones")
                times: dict[str, list[float]] = {name: [] for name in jobs}
                for _ in range(args.rounds):
                    for name, job in jobs.items():
                        times[name].append(seconds(job))
                fps = {name: args.batch / statistics.median(t) for name, t in times.items()}
                best = max(v for k, v in fps.items() if k != "in-process")
                cells = " | ".join(f"{fps[f'x{n}']:.0f}" for n in workers)
                data["fps"][f"{settings} {width}x{height}"] = fps
                say(f"| {width}x{height} | {fps['in-process']:.0f} | {cells} | "
                    f"{best / fps['in-process']:.2f} |")
                local.renderer.close()
        finally:
            for pool in pools.values():
                pool.close()
    if args.name:
        print("published in", publish(args.name, "\n".join(lines) + "\n", data, command))


if __name__ == "__main__":
    main()
