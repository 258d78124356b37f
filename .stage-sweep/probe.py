"""Probe: the machine's own 1 -> K scaling for single-threaded MuJoCo 3.2 work vs the 3.8 pool."""
import json, os, subprocess, sys, tempfile, statistics
from pathlib import Path
sys.path.insert(0, "benchmarks")
from measure import interleaved, paired_ratio
from systems import RemoteRunner, python38
from py38.runner import InProcessMujoco, timed_rate
import sweep
from sweep import Sim, Local, KEY

print(subprocess.run(["lscpu"], capture_output=True, text=True).stdout)
sib = sorted({Path(f"/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list").read_text().strip() for c in os.sched_getaffinity(0)})
print("siblings:", sib)
py38 = python38()

class Concurrent:
    def __init__(self, model, n, k):
        self.num_envs, self.worker_pids = n, []
        self.runners = [RemoteRunner(py38) for _ in range(k)]
        for r in self.runners:
            r.call(op="make", system="mujoco", num_envs=n // k, model=model, substeps=1,
                   threads=1, zero_ctrl=True, keyframe=KEY)
    def measure(self, budget):
        for r in self.runners:
            r.process.stdin.write(json.dumps({"op": "measure", "budget": budget}) + "\n"); r.process.stdin.flush()
        return sum(json.loads(r.process.stdout.readline())["rate"] for r in self.runners)
    def close(self):
        for r in self.runners:
            r.call(op="close"); r.close()

class Pinned(Sim):
    def __init__(self, model, n, cpus, **kw):
        super().__init__(model, n, **kw)
        for pid, c in zip(self.worker_pids, cpus):
            os.sched_setaffinity(pid, {c})

model = sys.argv[1]
sizes = [int(s) for s in sys.argv[2].split(",")]
# two cpus on distinct cores, neither cpu 0
firsts = [int(s.split(",")[0].split("-")[0]) for s in sib]
pick = [c for c in firsts if c != 0][:2]
print("pinned to", pick)
out = {}
with tempfile.TemporaryDirectory() as d:
    start = sweep.settled(model, Path(d))
    for n in sizes:
        rows = {
            "batch 1 thread": lambda: Local(InProcessMujoco(start, n, KEY, 1, 1, zero_ctrl=True), n),
            "batch 2 threads": lambda: Local(InProcessMujoco(start, n, KEY, 1, 2, zero_ctrl=True), n),
            "loop38 x1": lambda: Concurrent(start, n, 1),
            "loop38 x2 procs": lambda: Concurrent(start, n, 2),
            "loop38 x8 procs": lambda: Concurrent(start, n, 8),
            "unisim38 w1": lambda: Sim(start, n, python=py38, workers=1),
            "unisim38 w2": lambda: Sim(start, n, python=py38, workers=2),
            "unisim38 w2 pinned": lambda: Pinned(start, n, pick, python=py38, workers=2),
            "unisim38 w8": lambda: Sim(start, n, python=py38, workers=8),
        }
        built = {k: f() for k, f in rows.items()}
        try:
            rates = interleaved(built, 5, 0.8)
        finally:
            for s in built.values():
                s.close()
        r = {k: (statistics.median(v), paired_ratio(v, rates["loop38 x1"])) for k, v in rates.items()}
        r["w2/w1"] = paired_ratio(rates["unisim38 w2"], rates["unisim38 w1"])
        r["w2p/w1"] = paired_ratio(rates["unisim38 w2 pinned"], rates["unisim38 w1"])
        r["w8/w1"] = paired_ratio(rates["unisim38 w8"], rates["unisim38 w1"])
        r["b2/b1"] = paired_ratio(rates["batch 2 threads"], rates["batch 1 thread"])
        out[n] = {"summary": r, "rates": rates}
        for k, v in r.items():
            print(n, k, v, flush=True)
Path(os.environ["OUT"], "probe.json").write_text(json.dumps(out, indent=1))
