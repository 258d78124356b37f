"""The sweep's figures as Markdown (the published block) and as a plot, from its data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import ticker

REF = "in-process, all threads"
LOOP38 = "3.8 in-process MjData loop"
STEPPER38 = "3.8 worker's stepper in-process"
GANG38 = STEPPER38 + ", {k} independent processes"
POOL38 = (2, 8)  # the 3.8 pool sizes measured beside one worker (issue 15's targets)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _sizes(data: dict[str, Any]) -> list[str]:
    return list(data["sweep"])


def throughput(data: dict[str, Any]) -> str:
    sweep, sizes = data["sweep"], _sizes(data)
    if not sizes:
        return "(not measured)\n"
    names = list(dict.fromkeys(k for n in sizes for k in (*sweep[n]["median"],
                                                          *sweep[n]["skipped"])))
    rows = []
    for name in names:
        row = [name]
        for n in sizes:
            d = sweep[n]
            if name in d["skipped"]:
                row.append(d["skipped"][name])
                continue
            ratio = "" if name == REF else f" ({d['ratio'][name]:.2f}x)"
            split = f" [{d['split'][name]}]" if name in d["split"] else ""
            row.append(f"{d['median'][name]:,.0f}{ratio}{split}")
        rows.append(row)
    return _table(["env-steps/s", *(f"N={n}" for n in sizes)], rows)


def _ms(d: dict[str, Any], name: str, n: str) -> float | None:
    rate = d["median"].get(name)
    return None if rate is None else int(n) / rate * 1e3


def profile(data: dict[str, Any]) -> str:
    """Per step, by subtraction: physics, + engine/slot copies, + the process boundary."""
    sweep, sizes = data["sweep"], _sizes(data)
    if not sizes:
        return "(not measured)\n"
    k38 = {n: sweep[n]["split"].get("3.8 worker, default split", "") for n in sizes}
    stages = [
        ("physics: in-process mujoco.batch, all threads", REF, None),
        ("+ copies between engine and slots (worker's stepper in-process)",
         "worker's stepper in-process, all threads", REF),
        ("+ process boundary: doorbell, wake-ups (unisim, 1 worker, all threads)",
         f"unisim workers=1, threads={data['machine']['cpus']}",
         "worker's stepper in-process, all threads"),
        ("3.8 physics: MjData loop in-process, 1 thread", LOOP38, None),
        ("3.8: the worker's stepper instead (its Python loop, slot copies included)",
         STEPPER38, LOOP38),
        ("3.8 + process boundary (1 worker)", "3.8 worker, workers=1", STEPPER38),
    ]
    rows = []
    for label, name, base in stages:
        row = [label]
        for n in sizes:
            t, b = _ms(sweep[n], name, n), (_ms(sweep[n], base, n) if base else 0.0)
            row.append("" if t is None or b is None else
                       (f"{t:.2f}" if base is None else f"{t - b:+.2f} ({(t - b) / t:+.0%})"))
        rows.append(row)
    row = ["3.8, K workers of the default split: measured vs 1 worker / K (barrier, "
           "wake-ups, stragglers)"]
    for n in sizes:
        one = _ms(sweep[n], "3.8 worker, workers=1", n)
        many = _ms(sweep[n], "3.8 worker, default split", n)
        k = k38[n].split("x")[0]
        row.append("" if one is None or many is None or not k.isdigit() else
                   f"{many:.2f} vs {one / int(k):.2f} (K={k})")
    rows.append(row)
    for k in POOL38:
        row = [f"3.8, workers={k}: measured vs the worker's stepper in {k} independent "
               "processes (the machine's ceiling for a pool of that size)"]
        for n in sizes:
            pool = _ms(sweep[n], f"3.8 worker, workers={k}", n)
            gang = _ms(sweep[n], GANG38.format(k=k), n)
            row.append("" if pool is None or gang is None else f"{pool:.2f} vs {gang:.2f}")
        if any(row[1:]):
            rows.append(row)
    return _table(["ms per step", *(f"N={n}" for n in sizes)], rows)


def memory(data: dict[str, Any]) -> str:
    rows = []
    for name, m in data["memory"].items():
        if "skipped" in m:  # why the engine could not start here: its first line (a table
            rows.append([name, m["skipped"].splitlines()[0], "", "", ""])  # row is one line)
            continue
        rss = m["rss_mib"]
        rows.append([name, m["engine"], f"{rss['VmRSS']:.0f}",
                     f"{rss.get('RssAnon', 0):.0f} / {rss.get('RssFile', 0):.0f} / "
                     f"{rss.get('RssShmem', 0):.1f}", f"{m['slot_bytes_per_env']:,}"])
    last = (_sizes(data) or [""])[-1]
    for name, m in data["sweep"].get(last, {}).get("memory", {}).items():
        rss = m["rss_mib"]
        rows.append([f"{name}, N={last} (ant)", f"{m['engine']}, {m['workers']} worker(s)",
                     f"{rss['VmRSS']:.0f}",
                     f"{rss.get('RssAnon', 0):.0f} / {rss.get('RssFile', 0):.0f} / "
                     f"{rss.get('RssShmem', 0):.1f}", f"{m['slot_bytes_per_env']:,}"])
    return _table(["worker", "engine", "RSS per worker, MiB", "anon / file / shm MiB",
                   "shared-memory bytes per env"], rows)


def latency(data: dict[str, Any]) -> str:
    rows = [[label, f"{r['p50_us']:.1f}", f"{r['p99_us']:.1f}", f"{r['ratio_to_floor']:.2f}x"]
            for label, r in data["latency"].items()]
    return _table(["N=1 cartpole", "p50 µs", "p99 µs", "vs raw pipe"], rows)


def targets(data: dict[str, Any]) -> str:
    sweep, sizes, cpus = data["sweep"], _sizes(data), data["machine"]["cpus"]
    rows: list[list[str]] = []

    def add(target: str, value: float | None, limit: float, higher: bool = True,
            beside: str = "") -> None:
        if value is None:
            rows.append([target, "not measured"])
            return
        met = value >= limit if higher else value <= limit
        shown = f"{value:.2f}"
        if float(shown) == limit:  # 0.949 missed 0.95: say so
            shown = f"{value:.3f}"
        rows.append([target, f"{shown}x ({'met' if met else 'missed'}{beside})"])

    for n in sizes:
        add(f"default split >= 0.95x in-process all threads, N={n}",
            sweep[n]["ratio"].get("unisim default split"), 0.95)
    for n in sizes:
        if int(n) >= 4096:
            add(f"3.8 worker, default split >= 0.9x in-process 4.0 all threads, N={n}",
                sweep[n]["ratio"].get("3.8 worker, default split"), 0.9)
    for k, limit in ((2, 1.85 if cpus >= 16 else 1.7), (8, 6.0)):
        for n in sizes:
            d = sweep[n]["ratio"]
            many, one = d.get(f"3.8 worker, workers={k}"), d.get("3.8 worker, workers=1")
            gang, alone = d.get(GANG38.format(k=k)), d.get(STEPPER38)
            machine = ("" if gang is None or alone is None else
                       f"; the stepper in {k} independent processes: {gang / alone:.2f}x")
            if many is not None and one is not None:
                add(f"3.8 pool workers=1 -> {k} >= {limit}x, N={n}", many / one, limit,
                    beside=machine)
    latency = data["latency"]
    for label, r in latency.items():
        for kind, limit in (("doorbell", 0.5), ("pipe", 1.5)):
            if label.startswith(f"unisim step, {kind}") and (kind == "doorbell" or cpus >= 16):
                least = _least_step(latency, kind, label.rsplit(" ", 1)[-1])
                add(f"{label} <= {limit}x raw pipe", r["ratio_to_floor"], limit, higher=False,
                    beside="" if least is None else f"; the least Python step: {least:.2f}x")
    return _table(["target (issue 15)", "this run"], rows)


def _least_step(latency: dict[str, Any], transport: str, worker: str) -> float | None:
    """The ratio of the least Python step on ``transport`` with a ``worker`` interpreter's
    peer (runs before those rows were measured: None)."""
    for label, r in latency.items():
        if label.startswith(f"least Python step, {transport}") and label.endswith(worker):
            return float(r["ratio_to_floor"])
    return None


def start(settings: dict[str, Any]) -> str:
    """Where every system starts (runs before ``settle`` started where the model does)."""
    settle = settings.get("settle")
    return f"from the state after {settle:g} s at zero ctrl" if settle else \
        "from where the model starts"


def block(data: dict[str, Any], before: dict[str, Any] | None, name: str) -> str:
    """The figure block of a run; a section the run left out (``--only``) is left out."""
    m = data["machine"]
    s = data["settings"]
    workload = (f"; {m['model']}, 1 substep, zero ctrl, {start(s)}" if data["sweep"] else "")
    parts = [
        f"`{data['command']}`: {m['cpus']} CPUs ({m['machine']}), Python {m['python']}, "
        f"MuJoCo {m['mujoco']}, numpy {m['numpy']}, 3.8 worker: "
        f"{'MuJoCo 3.2 on ' + m['py38'] if m['py38'] else 'none'}{workload}; {m['date']}; "
        f"load average {', '.join(f'{x:.1f}' for x in m['load'])}.\n",
    ]
    if data["sweep"]:
        parts += [
            f"env-steps/s, median of {s['reps']} interleaved repetitions of {s['budget']} s; "
            f"(ratio): median paired ratio to `{REF}`; [KxT]: the split, K workers x T "
            "threads.\n",
            throughput(data),
            f"\n![env-steps/s against N and against workers](figures/{name}.png)\n",
            "\nWhere a step's time goes, by subtraction of the rows above (ms per step):\n",
            profile(data),
        ]
        if before is not None:
            parts += [f"\nThe same, before (main, `{before['command']}`, "
                      f"{before['machine']['date']}; every system "
                      f"{start(before['settings'])}):\n", profile(before)]
    if data["memory"]:
        parts += ["\nMemory: resident set per worker and shared-memory slot bytes per env:\n",
                  memory(data)]
    if data["latency"]:
        parts += ["\nStep latency (the suite's round trips, this run):\n", latency(data)]
    parts += ["\nTargets:\n", targets(data)]
    return "\n".join(p.rstrip("\n") + "\n" for p in parts)


def plot(data: dict[str, Any], path: Path) -> None:
    sweep, sizes = data["sweep"], [int(n) for n in data["sweep"]]
    if not sizes:
        return
    figure, axes = plt.subplots(1, 2, figsize=(14, 7.5))
    names = list(dict.fromkeys(k for n in sweep for k in sweep[n]["median"]))
    colours = plt.get_cmap("tab20").colors
    for index, name in enumerate(names):
        points = [(int(n), d["median"][name]) for n, d in sweep.items() if name in d["median"]]
        xs, ys = zip(*points, strict=True)
        axes[0].plot(xs, ys, marker="o", label=name, color=colours[index % len(colours)],
                     linestyle="--" if name.startswith("3.8") else "-")
    axes[0].set(xscale="log", yscale="log", xlabel="N (parallel envs)", ylabel="env-steps/s",
                title=f"{data['machine']['model']}, {data['machine']['cpus']} CPUs",
                xticks=sizes, xticklabels=[str(n) for n in sizes])
    last = str(sizes[-1])
    d = sweep[last]
    lines = (("unisim workers=", "unisim default split",
              f"worker {data['machine']['python']}, MuJoCo batch (threads = cores / K)"),
             ("3.8 worker, workers=", "3.8 worker, default split",
              "worker 3.8, MuJoCo 3.2 loop"))
    for prefix, default, label in lines:
        found = {int(k.split("=")[1].split(",")[0]): v for k, v in d["median"].items()
                 if k.startswith(prefix)}
        if default in d["median"]:  # the default split is a point of the line too
            found[int(d["split"][default].split("x")[0])] = d["median"][default]
        if found:
            xs, ys = zip(*sorted(found.items()), strict=True)
            axes[1].plot(xs, ys, marker="o", label=label)
    ceiling = {k: d["median"][GANG38.format(k=k)] for k in POOL38
               if GANG38.format(k=k) in d["median"]}
    if ceiling and STEPPER38 in d["median"]:
        ceiling[1] = d["median"][STEPPER38]
        xs, ys = zip(*sorted(ceiling.items()), strict=True)
        axes[1].plot(xs, ys, marker="o", linestyle=":",
                     label="3.8 worker's stepper in K independent processes (the ceiling)")
    if REF in d["median"]:
        axes[1].axhline(d["median"][REF], color="k", linestyle="--", label=REF)
    ks = [1, 2, 4, 8, 16, 32, 64, 128]
    ks = [k for k in ks if k <= data["machine"]["cpus"]]
    axes[1].set(xscale="log", xlabel="workers K", ylabel="env-steps/s",
                title=f"N={last}: against workers", xticks=ks, xticklabels=[str(k) for k in ks])
    for ax in axes:
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.yaxis.set_major_formatter(ticker.StrMethodFormatter("{x:,.0f}"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
