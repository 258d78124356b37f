"""Publish a figure block: ``docs/results/NAME.json`` and the text between its markers.

A block is the text between ``<!-- figures:NAME:begin -->`` and ``<!-- figures:NAME:end -->``
(each a line of its own) in one Markdown file of ``README.md`` or ``docs/``; its result file
is ``{"command": ..., "block": <that text, exactly>, "data": <the raw figures>}``. The
same contract as ``scripts/doc_figures.py`` (issue 17), whose ``publish`` this mirrors
until it is on main.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def publish(name: str, block: str, data: Any, command: str, root: Path = ROOT) -> Path:
    """Write the result file and put ``block`` between ``name``'s markers; the document."""
    if block and not block.endswith("\n"):
        block += "\n"
    begin, end = f"<!-- figures:{name}:begin -->\n", f"<!-- figures:{name}:end -->"
    documents = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    for path in documents:
        text = path.read_text() if path.is_file() else ""
        start = text.find(begin)
        if start < 0:
            continue
        stop = text.find(end, start)
        if stop < 0:
            raise ValueError(f"{path}: figures:{name}:begin has no end marker")
        path.write_text(text[:start + len(begin)] + block + text[stop:])
        result = root / "docs" / "results" / f"{name}.json"
        result.parent.mkdir(parents=True, exist_ok=True)
        result.write_text(json.dumps({"command": command, "block": block, "data": data},
                                     indent=1) + "\n")
        return path
    raise ValueError(f"no document has the markers of figures:{name}: add them where the "
                     "figures go")
