"""Render the fault matrix the tests recorded (build/fault-matrix.jsonl) as a Markdown table.

    python tools/reliability/fault_matrix.py          # publish the table into docs/reliability.md
    python tools/reliability/fault_matrix.py --check  # fail if the docs miss a recorded case
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "figures"))
from doc_figures import all_blocks, publish

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "build" / "fault-matrix.jsonl"
DOC = ROOT / "docs" / "reliability.md"
NAME = "fault-matrix"  # the figures:NAME block (tools/figures/doc_figures.py) it is published as


def table(rows: list[dict[str, object]]) -> str:
    lines = ["| fault | phase | what the user sees | detected after (s) | leaks checked |",
             "|---|---|---|---:|---|"]
    for row in rows:
        lines.append(f"| {row['fault']} | {row['phase']} | `{row['seen']}` | "
                     f"{float(row['seconds']):.3f} | processes, /dev/shm, descriptors |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in RECORD.read_text().splitlines() if line]
    if not rows:
        print(f"{RECORD} is empty: run the tests (tests/test_fault_matrix.py) first")
        return 1
    if args.check:
        block = all_blocks()[NAME].text
        missing = [f"{r['fault']} | {r['phase']}" for r in rows
                   if f"| {r['fault']} | {r['phase']} |" not in block]
        for item in missing:
            print(f"docs/reliability.md lacks the tested case: {item}")
        print(f"{len(rows) - len(missing)} of {len(rows)} tested cases are documented")
        return 1 if missing else 0
    publish(NAME, table(rows), rows, "make test && python tools/reliability/fault_matrix.py")
    print(f"wrote {len(rows)} rows into {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
