"""Round-trip latency of two git revisions of unisim, interleaved in one run.

    python -m benchmarks.latency.compare_revisions BEFORE [AFTER] [--blocks 11] [--steps 2000]
                                                   [--model cartpole] [--num-envs 1]
                                                   [--python PYTHON] [--unpinned]

Each revision is exported (``git archive``) into a temporary folder laid out as the
installed packages (``unisim/``, ``unisim_protocol/``, ``unisim_worker/``) and served by a
process of its own that holds two backends of ``--model`` (doorbell and pipe path; default
split; workers on ``--python``, by default the host's), and times their step, a reset of
one env and a ping, pinned as the suite's latency blocks are where each backend has one
worker (``latency.pin_apart``: the serving process on one core, its workers on another).
Blocks of ``--steps`` calls alternate between the revisions, which take turns to go first;
the table shows each one's median p50 and the median of the paired after/before ratios
(machine noise hits both alike).
AFTER defaults to the working tree; either may be a folder holding a checkout (``git archive
REV | tar -x -C DIR`` made where the history is). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

from benchmarks.latency.round_trips import pin_apart
from tools.figures.doc_figures import ROOT

SERVER = r"""
import json, sys, time, unisim
model, num_envs, python = sys.argv[1], int(sys.argv[2]), sys.argv[3] or None
options = dict(model=model, num_envs=num_envs, python=python, progress=False)
bell = unisim.Backend("mujoco", **options)
pipe = unisim.Backend("mujoco", **options, doorbell=False)
calls = {"step, doorbell": bell.step, "step, pipe path": pipe.step,
         "reset one env, doorbell": lambda: bell.reset([0]),
         "reset one env, pipe path": lambda: pipe.reset([0]),
         "ping, doorbell": bell.ping, "ping, pipe path": pipe.ping}
print(json.dumps({"file": unisim.__file__, "workers": bell.worker_pids + pipe.worker_pids}),
      flush=True)
for line in sys.stdin:
    n, out = int(line), {}
    for name, call in calls.items():
        for _ in range(20):
            call()
        trips = []
        for _ in range(n):
            start = time.perf_counter()
            call()
            trips.append(time.perf_counter() - start)
        out[name] = sorted(trips)[len(trips) // 2] * 1e6
    print(json.dumps(out), flush=True)
"""


def package(revision: str | None, into: Path) -> Path:
    """A folder whose ``unisim`` package is ``revision`` (None: the working tree; a folder:
    a checkout of it, for a machine without the repository's history)."""
    source = into / "source"
    if revision is None:
        source = ROOT
    elif Path(revision).is_dir():
        source = Path(revision).resolve()
    else:
        source.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    site = into / "site"
    shutil.copytree(source / "unisim", site / "unisim")
    for part in ("protocol", "worker"):
        root = source / part / "src" / f"unisim_{part}"
        if root.is_dir():  # each its own source root
            (site / f"unisim_{part}").symlink_to(root)
        elif (source / part).is_dir():  # revisions before both moved into unisim/
            (site / "unisim" / part).symlink_to(source / part)
    return site


def pipes(server: subprocess.Popen[str]) -> tuple[IO[str], IO[str]]:
    """A server's stdin and stdout (both opened as pipes)."""
    assert server.stdin is not None and server.stdout is not None
    return server.stdin, server.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after", nargs="?")
    parser.add_argument("--blocks", type=int, default=11)
    parser.add_argument("--steps", type=int, default=2000, help="calls per block")
    parser.add_argument("--model", default="cartpole", help="a bundled model or an MJCF path")
    parser.add_argument("--num-envs", type=int, default=1)
    parser.add_argument("--python", default="", help="the workers' interpreter (a 3.8 one, say)")
    parser.add_argument("--unpinned", action="store_true", help="leave the processes where "
                        "the scheduler puts them (default, where each backend has one "
                        "worker: each host on one core and its workers on another, as in the "
                        "suite's latency blocks)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="unisim-compare-") as tmp:
        servers = {}
        for label, revision in (("before", args.before), ("after", args.after)):
            folder = Path(tmp) / label
            folder.mkdir()
            env = {**os.environ, "PYTHONPATH": str(package(revision, folder))}
            model = str(Path(args.model).resolve()) if Path(args.model).exists() else args.model
            command = [sys.executable, "-c", SERVER, model, str(args.num_envs), args.python]
            servers[label] = subprocess.Popen(command, env=env, text=True,
                                              cwd=tmp,
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            hello = json.loads(pipes(servers[label])[1].readline())
            print(label, revision or "working tree", hello["file"])
            if not args.unpinned and len(hello["workers"]) == 2:  # one per backend: a pool's
                pin_apart(hello["workers"], host=servers[label].pid)  # would share one core
        results: dict[str, dict[str, list[float]]] = {k: {} for k in servers}
        for block in range(args.blocks):
            order = list(servers.items())  # alternates, so neither always runs first
            for label, server in order[::-1] if block % 2 else order:
                ask, answer = pipes(server)
                ask.write(f"{args.steps}\n")
                ask.flush()
                for path, p50 in json.loads(answer.readline()).items():
                    results[label].setdefault(path, []).append(p50)
        for server in servers.values():
            pipes(server)[0].close()
            server.wait(timeout=60)
    print(f"\n| call | before p50 µs | after p50 µs | after/before ({args.blocks} blocks) |")
    print("|---|---:|---:|---:|")
    for path, before in results["before"].items():
        after = results["after"][path]
        ratio = statistics.median(a / b for a, b in zip(after, before, strict=True))
        print(f"| {path} | {statistics.median(before):.1f} | {statistics.median(after):.1f} "
              f"| {ratio:.2f} |")


if __name__ == "__main__":
    main()
