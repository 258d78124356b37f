"""Figures in the docs are written by the script that measures them, and CI checks them.

A figure block is a marked region of any Markdown file of ``README.md`` or ``docs/``::

    <!-- figures:NAME:begin -->
    ...the block: every line between the two marker lines...
    <!-- figures:NAME:end -->

Each marker is a line of its own. The **block** is the text from just after the begin
marker's newline up to the first character of the end marker line: empty, or whole lines
each ending in ``"\\n"``. Its committed result file is ``docs/results/NAME.json``, a JSON
object with at least ``"command"`` (the command that measured it, as a user would type it),
``"block"`` (the block, exactly) and ``"data"`` (the raw figures the block was made from).
NAME is letters, digits, ``.``, ``_`` and ``-``.

A measuring script calls ``publish(name, block, data, command)``: it writes the result file
and replaces the block in whichever document holds the markers. ``previous(name)`` gives
the data of the last published run, for scripts that report a range over several runs.
``invocation()`` and ``stamp()`` give a block's first line its command and its when and how
busy.

    python tools/figures/doc_figures.py --check    # CI: every block equals its result file's

Stdlib only, so that any script (the benchmarks, the soak, the training runs) can import
it: a module run from the repository root with ``python -m`` (the benchmarks) as
``from tools.figures.doc_figures import publish``; a script elsewhere after
``sys.path.insert(0, "<repo>/tools/figures")`` as ``from doc_figures import publish``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
MARKER = re.compile(r"^<!-- figures:([A-Za-z0-9._-]+):(begin|end) -->$")


@dataclass(frozen=True)
class Block:
    name: str
    path: Path  # the Markdown file
    start: int  # character offsets of the block (between the marker lines) in its text
    stop: int
    text: str


def documents(root: Path = ROOT) -> list[Path]:
    """The Markdown files whose figures are checked: README.md and docs/**/*.md."""
    found = [root / "README.md"] if (root / "README.md").is_file() else []
    return found + sorted((root / "docs").rglob("*.md"))


def blocks_of(path: Path) -> list[Block]:
    """The figure blocks of one document; ``ValueError`` for unbalanced markers."""
    text = path.read_text()
    found: list[Block] = []
    open_name, start, offset = None, 0, 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        marker = MARKER.match(line.rstrip("\n"))
        if marker:
            name, kind = marker.groups()
            if kind == "begin":
                if open_name is not None:
                    raise ValueError(f"{path}:{number}: figures:{name} begins inside "
                                     f"figures:{open_name}")
                open_name, start = name, offset + len(line)
            else:
                if open_name != name:
                    raise ValueError(f"{path}:{number}: figures:{name}:end without its begin")
                found.append(Block(name, path, start, offset, text[start:offset]))
                open_name = None
        offset += len(line)
    if open_name is not None:
        raise ValueError(f"{path}: figures:{open_name}:begin has no end marker")
    return found


def all_blocks(root: Path = ROOT) -> dict[str, Block]:
    """Every block of every document by name; ``ValueError`` if a name is used twice."""
    blocks: dict[str, Block] = {}
    for path in documents(root):
        for block in blocks_of(path):
            if block.name in blocks:
                raise ValueError(f"figures:{block.name} is marked twice: in "
                                 f"{blocks[block.name].path} and in {path}")
            blocks[block.name] = block
    return blocks


def result_path(name: str, root: Path = ROOT) -> Path:
    return root / "docs" / "results" / f"{name}.json"


def invocation(argv: list[str] | None = None) -> str:
    """The running script's command line as a user types it from the repository root
    (``python -m NAME`` for a module run with ``-m``)."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)  # None for a script
    script = Path(sys.argv[0]).resolve()
    shown = (["-m", spec.name] if spec is not None else
             [str(script.relative_to(ROOT) if script.is_relative_to(ROOT) else script)])
    return shlex.join(["python", *shown, *(sys.argv[1:] if argv is None else argv)])


def stamp() -> str:
    """When a run was made and how busy the machine was: figures depend on both."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{time.strftime('%Y-%m-%d %H:%M %Z')}; load average {load}"


def previous(name: str, root: Path = ROOT) -> Any:
    """The ``data`` of ``name``'s committed result file, or None if there is none."""
    path = result_path(name, root)
    return json.loads(path.read_text())["data"] if path.is_file() else None


def publish(name: str, block: str, data: Any, command: str, root: Path = ROOT) -> Path:
    """Write ``docs/results/<name>.json`` and put ``block`` between ``name``'s markers.

    The markers must already be in one document (place them by hand once, where the
    figures belong). ``block`` gets a final newline if it lacks one. Returns the document.
    """
    if not MARKER.match(f"<!-- figures:{name}:begin -->"):
        raise ValueError(f"figure name {name!r} may hold only letters, digits, '.', '_', '-'")
    if block and not block.endswith("\n"):
        block += "\n"
    found = all_blocks(root).get(name)
    if found is None:
        raise ValueError(f"no document of {root} has the markers <!-- figures:{name}:begin --> "
                         f"and <!-- figures:{name}:end -->: add them where the figures go")
    text = found.path.read_text()
    found.path.write_text(text[:found.start] + block + text[found.stop:])
    path = result_path(name, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"command": command, "block": block, "data": data}
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return found.path


def problems(root: Path = ROOT) -> list[str]:
    """What ``--check`` reports: blocks unlike their result file, and strays either way."""
    try:
        blocks = all_blocks(root)
    except ValueError as exc:
        return [str(exc)]
    found = []
    for name, block in blocks.items():
        where = block.path.relative_to(root)
        path = result_path(name, root)
        if not path.is_file():
            found.append(f"{where}: figures:{name} has no result file {path.relative_to(root)}")
            continue
        try:
            record = json.loads(path.read_text())
            missing = {"command", "block", "data"} - set(record)
        except (ValueError, TypeError, AttributeError) as exc:
            found.append(f"{path.relative_to(root)} is not a JSON object: {exc}")
            continue
        if missing:
            found.append(f"{path.relative_to(root)} lacks {', '.join(sorted(missing))}")
        elif record["block"] != block.text:
            found.append(f"{where}: figures:{name} differs from {path.relative_to(root)}; "
                         f"re-run `{record['command']}`, or restore the block:\n"
                         + _diff(record["block"], block.text))
    for path in sorted((root / "docs" / "results").glob("*.json")):
        if path.stem not in blocks:
            found.append(f"{path.relative_to(root)} has no figures:{path.stem} block in "
                         "README.md or docs/")
    return found


def _diff(expected: str, actual: str) -> str:
    import difflib

    lines = difflib.unified_diff(expected.splitlines(keepends=True),
                                 actual.splitlines(keepends=True),
                                 "result file", "document", n=1)
    return "".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="fail if a marked block differs from its result file")
    args = parser.parse_args()
    if not args.check:
        for name, block in sorted(all_blocks().items()):
            command = json.loads(result_path(name).read_text())["command"] \
                if result_path(name).is_file() else "(no result file)"
            print(f"{name:<24} {block.path.relative_to(ROOT)}: {command}")
        return 0
    found = problems()
    for problem in found:
        print(problem)
    count = len(all_blocks()) if not found else None
    print(f"{count} figure blocks match their result files" if count is not None
          else f"{len(found)} problem(s) with the figures in the docs")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
