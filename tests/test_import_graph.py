"""The import graph: host and worker each import the shared core, never each other.

Read from the source with ``ast``, so a lazy import inside a function counts too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIDES = {"host": ROOT / "unisim", "core": ROOT / "protocol" / "src" / "unisim_protocol",
         "worker": ROOT / "worker" / "src" / "unisim_worker"}
PACKAGES = {"host": "unisim", "core": "unisim_protocol", "worker": "unisim_worker"}
CORE_FILES = {p.stem for p in SIDES["core"].glob("*.py")}
# Names a sys.path entry of the worker's folders would make importable bare (the modules of
# an engine's folder share names with the standard library's and MuJoCo's: io, mujoco).
WORKER_FILES = ({p.stem for p in SIDES["worker"].glob("*.py")}
                | {p.stem for p in (SIDES["worker"] / "engines").glob("*.py")} | {"engines"})


def files(side: str) -> list[Path]:
    """The side's source files (the worker's SDK fake is not worker code: it stands in for
    an SDK, which imports no unisim)."""
    found = sorted(SIDES[side].rglob("*.py"))
    return [p for p in found if not p.is_relative_to(SIDES["worker"] / "isaacgym_fake")]


def module_name(side: str, path: Path) -> tuple[str, bool]:
    """Dotted name of ``path`` and whether it is a package's ``__init__``."""
    parts = path.relative_to(SIDES[side]).with_suffix("").parts
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join((PACKAGES[side], *parts)), is_package


def imports(path: Path, name: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """Fully qualified names ``path`` imports (``from a import b`` yields ``a.b``)."""
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def side_of(target: str) -> str | None:
    for side in ("core", "worker", "host"):
        package = PACKAGES[side]
        if target == package or target.startswith(package + "."):
            return side
    return None


def edges() -> dict[tuple[str, str], list[str]]:
    """``{(from side, to side): ["file:line imports name", ...]}`` across the three sides."""
    found: dict[tuple[str, str], list[str]] = {}
    for side in SIDES:
        for path in files(side):
            name, is_package = module_name(side, path)
            for target, line in imports(path, name, is_package):
                other = side_of(target)
                if other is not None and other != side:
                    where = f"{path.relative_to(ROOT)}:{line} imports {target}"
                    found.setdefault((side, other), []).append(where)
    return found


def test_each_side_has_one_arrow_to_the_shared_core_and_none_to_the_other() -> None:
    assert set(edges()) == {("host", "core"), ("worker", "core")}, edges()


def test_worker_modules_import_each_other_relatively() -> None:
    """Only the bootstrap, which gives the package its name, names it absolutely."""
    for path in files("worker"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and not getattr(node, "level", 0):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""])
                for imported in names:
                    where = f"{path.relative_to(ROOT)}:{node.lineno} imports {imported}"
                    assert imported.split(".")[0] not in WORKER_FILES, where
                    if path.name != "bootstrap.py":
                        assert side_of(imported) != "worker", where


def test_tests_and_benchmarks_reach_worker_code_only_through_its_package() -> None:
    for folder in ("tests", "benchmarks", "tools"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                changed = (node.func if isinstance(node, ast.Call)  # sys.path.insert(...)
                           else node.targets[0] if isinstance(node, ast.Assign) else None)
                if changed is not None and ast.unparse(changed).startswith("sys.path"):
                    text = ast.unparse(node)
                    assert "worker" not in text and "protocol" not in text, \
                        f"{path}:{node.lineno} puts worker code on sys.path"
                if isinstance(node, ast.Import | ast.ImportFrom) \
                        and not getattr(node, "level", 0):
                    names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                             else [node.module or ""])
                    for imported in names:
                        top = imported.split(".")[0]
                        assert top not in (WORKER_FILES | CORE_FILES) - {"__init__"}, \
                            f"{path}:{node.lineno} imports {imported} by a bare name"


BENCHMARKS = ROOT / "benchmarks"
PY38_HELPERS = BENCHMARKS / "py38"  # run by path on an interpreter that sees no package


def import_statements(path: Path) -> Iterator[tuple[str, int, int]]:
    """``(module, level, line)`` of every import in ``path``; level > 0 is a relative one."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, 0, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or "", node.level, node.lineno


def test_benchmarks_import_each_other_through_the_package() -> None:
    """A benchmark runs as ``python -m benchmarks.GROUP.NAME`` and names the modules it
    shares absolutely (``from benchmarks.measure import paired_ratio``), never by a bare
    name that only a sys.path entry would resolve; the py38 helpers, run as files on another
    interpreter, see no package and import each other by bare name only."""
    ours = {p.stem for p in BENCHMARKS.rglob("*.py")} | {
        p.name for p in BENCHMARKS.rglob("*") if p.is_dir() and p.name != "__pycache__"}
    helpers = {p.stem for p in PY38_HELPERS.glob("*.py")}
    for path in sorted(BENCHMARKS.rglob("*.py")):
        is_helper = path.is_relative_to(PY38_HELPERS)
        for module, level, line in import_statements(path):
            where = f"{path.relative_to(ROOT)}:{line} imports {'.' * level}{module}"
            top = module.split(".")[0]
            assert level == 0, f"{where}: import it absolutely (from benchmarks.GROUP ...)"
            if is_helper:
                assert top not in ours | {"benchmarks"} or top in helpers, \
                    f"{where}: the helpers' interpreter sees only their own folder"
            else:
                assert top not in ours, \
                    f"{where} by a bare name: name it through the package (benchmarks.)"
        if not is_helper:
            assert "sys.path" not in path.read_text(), \
                f"{path.relative_to(ROOT)} edits sys.path: import through the package"


def test_this_check_sees_a_forbidden_arrow(tmp_path: Path) -> None:
    """A host module reaching the worker is caught, and relative imports resolve."""
    source = tmp_path / "planes.py"
    source.write_text("from unisim_worker import engines\nimport unisim_protocol as protocol\n"
                      "from .slots import Arena\n")
    found = [side_of(t) for t, _ in imports(source, "unisim.planes", False)]
    assert found == ["worker", "core", "host"]
