"""Issue 5's targets for the suite (docs/benchmarks.md), met or missed, from its figures."""

from __future__ import annotations

from typing import Any

from benchmarks.measure import paired_ratio
from benchmarks.throughput.lineup import (
    ANT_ASYNC,
    ASYNC,
    ENVPOOL,
    GYM_ANT_ASYNC,
    INPROC,
    INPROC38,
    PIPE,
    POOL38,
    WORKER,
    WORKER38,
)


def targets(results: dict[str, Any], sizes: list[int], ant_sizes: list[int]
            ) -> list[list[str]]:
    """Issue 5's targets, each met or missed by how much, from a suite run's own figures:
    rows of (target, measured, from) for the suite's last table."""
    rows: list[list[str]] = []

    def add(target: str, value: float | None, limit: float, higher: bool, unit: str,
            source: str) -> None:
        if value is None:
            rows.append([target, "not measured", source])
            return
        met = value >= limit if higher else value <= limit
        miss = abs(value / limit - 1) * 100
        verdict = "met" if met else f"missed by {miss:.{0 if miss >= 10 else 1}f}%"
        rows.append([target, f"{value:.2f}{unit} ({verdict})", source])

    def ratio(section: str, n: int, a: str, b: str) -> float | None:
        """Median paired ratio of rows a and b; a = 'unisim': the best of the unisim rows."""
        rates = results.get(section, {}).get(str(n), {}).get("rates", {})
        if b not in rates:
            return None
        names = [k for k in rates if k.startswith("unisim")] if a == "unisim" else [a]
        return max((paired_ratio(rates[k], rates[b]) for k in names if k in rates),
                   default=None)

    for label, rec in results.get("latency", {}).items():
        if label.startswith("unisim step, pipe path"):
            add("step round trip <= 1.2x raw pipe floor (pipe path)", rec["ratio_to_floor"], 1.2,
                False, "x", label)
        if label.startswith("unisim step, doorbell"):
            add("step p50 <= 10 µs with the doorbell", rec["p50_us"], 10.0, False, " µs", label)
    for n, limit in ((1024, 0.95), (16, 0.8)):
        if n in sizes:
            add(f"out-of-process / in-process >= {limit} at N={n}",
                ratio("quadruped", n, WORKER, INPROC), limit, True, "x", f"{WORKER} / {INPROC}")
            add(f"(same, Python 3.8) >= {limit} at N={n}",
                ratio("quadruped", n, WORKER38, INPROC38), limit, True, "x",
                f"{WORKER38} / {INPROC38}")
    for n in sizes:
        add(f"worker pool K=2 >= 1.7x K=1 at N={n}", ratio("quadruped", n, POOL38, WORKER38),
            1.7, True, "x", f"{POOL38} / {WORKER38}")
    add(">= 3x gymnasium AsyncVectorEnv at N=16", ratio("quadruped", 16, "unisim", ASYNC),
        3.0, True, "x", "best unisim row / AsyncVectorEnv, quadruped")
    add(">= 3x gymnasium AsyncVectorEnv at N=8", ratio("ant", 8, "unisim", ANT_ASYNC),
        3.0, True, "x", "best unisim row / AsyncVectorEnv of MjcfEnv, ant.xml")
    add(">= 3x gymnasium AsyncVectorEnv at N=8", ratio("ant", 8, "unisim", GYM_ANT_ASYNC),
        3.0, True, "x", "best unisim row / AsyncVectorEnv of gymnasium's Ant-v4")
    for n in ant_sizes:
        add(f">= EnvPool Ant-v4 at N={n}", ratio("ant", n, "unisim", ENVPOOL), 1.0, True, "x",
            "best unisim row / EnvPool, ant.xml")
    first, last = sizes[0], sizes[-1]
    for name in (PIPE, WORKER, WORKER38):
        traffic = [results.get("quadruped", {}).get(str(n), {}).get("bytes_per_step", {})
                   .get(name) for n in (first, last)]
        if all(traffic):
            totals = [t["read"] + t["written"] for t in traffic]
            ok = totals[0] == totals[1] and max(totals) <= 256
            rows.append([f"pipe bytes/step equal at N={first} and N={last}, <= 256 B",
                         f"{totals[0]:.0f} B and {totals[1]:.0f} B read+written "
                         f"({'met' if ok else 'missed'})", name])
    return rows
