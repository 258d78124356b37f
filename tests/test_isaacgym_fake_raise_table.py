"""docs/isaacgym.md's table "Where the fake raises" lists every raise of the SDK fake, and
nothing else: a raise added, moved to another function or reworded shows up here.

Each raise site has a key that survives line moves: ``file:Function:Exception:message``
(the enclosing function's qualified name, the exception's class or factory, and the first
four words of the message's literal text). Host-side: the fake's source is parsed, not run.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

from unisim.testing.isaacgym_fake_env import FAKE_ROOT

FAKE = FAKE_ROOT / "isaacgym"
DOC = Path(__file__).resolve().parent.parent / "docs" / "isaacgym.md"
SECTION = "## Where the fake raises"
KINDS = {"SDK fails", "SDK reports", "fake's limit", "strict only", "fake's bug", "fake's setting",
         "passed on"}


def _literal(node: ast.expr | None) -> str:
    """The leading literal text of a message expression ("" when it has none)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp):
        return _literal(node.left)
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if not isinstance(value, ast.Constant):
                break
            parts.append(str(value.value))
        return "".join(parts)
    return ""


def _sites_of(path: Path) -> list[str]:
    keys: list[str] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Raise) and child.exc is not None:
                exc = child.exc
                call = exc if isinstance(exc, ast.Call) else None
                target = call.func if call is not None else exc
                kind = target.id if isinstance(target, ast.Name) else \
                    target.attr if isinstance(target, ast.Attribute) else "?"
                message = _literal(call.args[0]) if call is not None and call.args else ""
                words = " ".join(message.split()[:4])
                keys.append(f"{path.name}:{'.'.join(scope) or '<module>'}:{kind}:{words}")
            visit(child, scope)

    visit(ast.parse(path.read_text(), str(path)), [])
    return keys


def raise_sites() -> list[str]:
    """Every raise site's key; a key repeated within one function gets ``#2``, ``#3``."""
    keys, seen = [], Counter[str]()
    for path in sorted(FAKE.glob("*.py")):
        for key in _sites_of(path):
            seen[key] += 1
            keys.append(key if seen[key] == 1 else f"{key} #{seen[key]}")
    return keys


def table_rows() -> list[tuple[str, str]]:
    """(key, kind) of each row of the doc's table."""
    text = DOC.read_text()
    assert SECTION in text, f"{DOC} has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        match = re.match(r"\| `([^`]+)` \| ([^|]+) \|", line)
        if match:
            rows.append((match.group(1), match.group(2).strip()))
    return rows


def test_the_fake_is_where_the_host_finds_it() -> None:
    assert (FAKE / "gymapi.py").is_file() and len(raise_sites()) > 20


def test_the_table_lists_every_raise_site_once_and_no_other() -> None:
    keys = [key for key, _ in table_rows()]
    duplicated = sorted(key for key, count in Counter(keys).items() if count > 1)
    assert not duplicated, f"listed twice in {SECTION!r}: {duplicated}"
    sites = set(raise_sites())
    missing, stale = sorted(sites - set(keys)), sorted(set(keys) - sites)
    assert not missing and not stale, (
        f"docs/isaacgym.md {SECTION!r} is out of date.\nraise sites it does not list (add a "
        f"row each: what the SDK does there, with a source, and what the fake does):\n"
        + "\n".join(missing) + "\nrows of sites that no longer exist:\n" + "\n".join(stale))


def test_each_row_says_which_kind_of_raise_it_is() -> None:
    kinds = {key: kind for key, kind in table_rows()}
    assert set(kinds.values()) <= KINDS, set(kinds.values()) - KINDS
    # a raise through fake_limit() says in its message that it is the fake's limit
    assert all(kinds[key] == "fake's limit" for key in kinds if ":fake_limit:" in key)
