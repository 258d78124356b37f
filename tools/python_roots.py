"""The repository's Python source roots and the oldest Python each runs on, read from their
pyprojects' ``requires-python``: the one place that says which folder is Python 3.8 code.

    python tools/python_roots.py [--older-than 3.10]   # prints "folder version" lines

The lint targets read it to choose what vermin, ``compileall`` on 3.8 and ruff check where.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def roots() -> dict[str, str]:
    """``{folder: oldest Python}`` of every tracked pyproject with ``requires-python >= X``."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "*pyproject.toml"],
                            check=True, capture_output=True, text=True).stdout.split()
    found = {}
    for name in listed:
        project = tomllib.loads((ROOT / name).read_text()).get("project", {})
        spec = project.get("requires-python", "").replace(" ", "")
        if spec.startswith(">="):
            found[str(Path(name).parent)] = spec[2:]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--older-than", default="", help="only roots for an older Python")
    args = parser.parse_args()
    for folder, version in roots().items():
        if not args.older_than or _version(version) < _version(args.older_than):
            print(folder, version)


if __name__ == "__main__":
    main()
