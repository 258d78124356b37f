"""What the GPU charges when two processes take turns on it, as the GPU pipeline's bridge does.

    python3 -m benchmarks.gpu.handover [--rounds 300] [--json FILE]
    python -m benchmarks.gpu.handover --saved FILE --publish   # on a machine with the docs

This process copies a 250 KB block on the GPU (the bridged step's outputs for the learner
at N = 1024) and waits for the copy, in three settings, round after round: after its own
kernels, after a peer process's kernels (the peer runs them and waits for them, then
answers over a pipe, as the bridge's worker does before its reply), and after a sleep
with the GPU idle. Each process has a CUDA context of its own; without MPS, "when
processes share the GPU their scheduling resources must be swapped on and off the GPU"
(https://docs.nvidia.com/deploy/mps/when-to-use-mps.html), so the first work after the
other process's is where the swap is paid. A bridged step on the GPU pipeline pays it
twice: the worker's first kernels after the host's actions, and the host's copy after the
worker's outputs.
Prints the medians; asserts nothing. Needs torch with CUDA.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from typing import Any

import torch

from benchmarks.measure import add_saved_options, publish_figures
from tools.figures.doc_figures import invocation, stamp

BLOCK_BYTES = 250 * 1024
KERNELS = 20  # the other side's work before each copy: small kernels, as a task's step ends


def busy(x: torch.Tensor) -> None:
    """A few small kernels on ``x``, waited for."""
    for _ in range(KERNELS):
        x.mul_(1.0001)
    torch.cuda.synchronize()


def peer() -> None:
    """The other process: on each byte from stdin, run its kernels and answer one byte."""
    x = torch.rand(1024, 64, device="cuda")
    busy(x)
    while sys.stdin.buffer.read(1):
        busy(x)
        sys.stdout.buffer.write(b"k")
        sys.stdout.buffer.flush()


def measure(args: argparse.Namespace) -> dict[str, Any]:
    if not torch.cuda.is_available():
        raise SystemExit("benchmarks.gpu.handover needs torch with CUDA and a GPU")
    block = torch.zeros(BLOCK_BYTES, dtype=torch.uint8, device="cuda")
    x = torch.rand(1024, 64, device="cuda")
    busy(x)
    process = subprocess.Popen([sys.executable, "-m", "benchmarks.gpu.handover", "--peer"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None

    def copy() -> float:
        started = time.perf_counter()
        block.clone()
        torch.cuda.synchronize()
        return (time.perf_counter() - started) * 1e6

    def after_peer() -> float:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(b"g")
        process.stdin.flush()
        if process.stdout.read(1) != b"k":
            raise RuntimeError(f"the peer process exited ({process.wait()})")
        return copy()

    samples: dict[str, list[float]] = {"own": [], "peer": [], "idle": []}
    try:
        after_peer()  # the peer's CUDA context is up
        for k in range(args.warmup + args.rounds):
            busy(x)
            own = copy()
            peer_copy = after_peer()
            time.sleep(0.002)
            idle = copy()
            if k >= args.warmup:
                for name, value in zip(samples, (own, peer_copy, idle), strict=True):
                    samples[name].append(value)
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    lines = [f"{stamp()}; {torch.cuda.get_device_name()}, torch {torch.__version__}; "
             f"a {BLOCK_BYTES // 1024} KB copy on the GPU and the wait for it, us, "
             f"medians of {args.rounds} rounds",
             f"after this process's own kernels          {medians['own']:8.1f}",
             f"after a peer process's kernels            {medians['peer']:8.1f}",
             f"after 2 ms with the GPU idle              {medians['idle']:8.1f}",
             f"the hand-over (peer - own)                {medians['peer'] - medians['own']:8.1f}"]
    return {"command": invocation(), "lines": lines, "medians_us": medians,
            "samples_us": samples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--peer", action="store_true", help=argparse.SUPPRESS)
    add_saved_options(parser, "gpu-handover")
    args = parser.parse_args()
    if args.peer:
        peer()
        return
    publish_figures(args, measure)


if __name__ == "__main__":
    main()
