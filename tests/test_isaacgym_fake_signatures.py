"""Signature fidelity of the IsaacGym SDK fake: name by name against ``isaacgym-stubs``.

The stubs (1.1rc4, in the type gate's venv ``.venv-typecheck``) give each class's fields
and each method's parameter names, order and defaults; where a stub says only
``(*args, **kwargs)`` (pybind11 overloads), the first line of the SDK docstring it carries
gives the real signature. gymtorch has no stub there: its two functions are compared
with our own stub of the SDK's gymtorch.py (tools/typecheck/typings/isaacgym/gymtorch.pyi).
"""

from __future__ import annotations

import ast
import glob
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
ADAPTER = sorted((ROOT / "worker" / "src" / "unisim_worker" / "engines" / "isaacgym")
                 .glob("*.py"))
# A parameter as compared: name, kind, has a default, the default when the source states
# a literal one ("?" when it does not).
Param = tuple[str, str, bool, Any]


def stub_path() -> Path:
    found = os.environ.get("UNISIM_ISAACGYM_STUBS") or next(iter(glob.glob(str(
        ROOT / ".venv-typecheck" / "lib" / "python*" / "site-packages" / "isaacgym-stubs"
        / "gymapi.pyi"))), "")
    if found and Path(found).is_file():
        return Path(found)
    reason = ("isaacgym-stubs is not installed: `make .venv-typecheck/.installed`, or set "
              "UNISIM_ISAACGYM_STUBS to its gymapi.pyi")
    if os.environ.get("UNISIM_REQUIRE_PY38"):
        pytest.fail(reason)
    pytest.skip(reason)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text.replace("- ", "-").strip())
    except (ValueError, SyntaxError):
        return "?"


def _from_docstring(doc: str, name: str) -> list[Param] | None:
    """The parameters in a pybind11 docstring's first line, ``name(self: Gym, a: T = d)``."""
    match = re.match(r"\s*(?:static\s+)?" + re.escape(name) + r"\((.*)\)\s*->", doc)
    if match is None:
        return None
    params: list[Param] = []
    for part in re.split(r",\s*(?![^<\[]*[>\]])", match.group(1)):
        if not part or part.startswith("self:") or part == "self":
            continue
        if part.startswith("*"):
            kind = "VAR_KEYWORD" if part.startswith("**") else "VAR_POSITIONAL"
            params.append((part.lstrip("*").split(":")[0], kind, False, None))
            continue
        head, _, default = part.partition(" = ")
        params.append((head.split(":")[0].strip(), "POSITIONAL_OR_KEYWORD", bool(default),
                       _literal(default) if default else None))
    return params


def _from_def(node: ast.FunctionDef) -> list[Param]:
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params: list[Param] = []
    for arg, default in zip(positional, defaults, strict=True):
        if arg.arg == "self":
            continue
        stated = "?" if default is None or (isinstance(default, ast.Constant)
                                            and default.value is Ellipsis) \
            else _literal(ast.unparse(default))
        params.append((arg.arg, "POSITIONAL_OR_KEYWORD", default is not None,
                       stated if default is not None else None))
    if args.vararg:
        params.append((args.vararg.arg, "VAR_POSITIONAL", False, None))
    if args.kwarg:
        params.append((args.kwarg.arg, "VAR_KEYWORD", False, None))
    return params


def _signatures(node: ast.FunctionDef) -> list[list[Param]]:
    """What a stub def allows: its own parameters, with the literal defaults its docstring
    states (the stubs write ``...``); its docstring's when it has only ``*args, **kwargs``."""
    own = _from_def(node)
    documented = _from_docstring(ast.get_docstring(node) or "", node.name)
    if documented is None:
        return [own]
    if [kind for _, kind, _, _ in own] == ["VAR_POSITIONAL", "VAR_KEYWORD"]:
        return [documented, own]
    if [p[:3] for p in documented] == [p[:3] for p in own]:
        return [[(name, kind, has, doc if has else None) for (name, kind, has, _), (*_, doc)
                 in zip(own, documented, strict=True)]]
    return [own]


def parse_stubs(text: str) -> dict[str, Any]:
    tree = ast.parse(re.sub(r"\bdef lambda\(", "def lambda_(", text))
    classes: dict[str, Any] = {}
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods: dict[str, list[list[Param]]] = {}
            fields = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    decorators = [ast.unparse(d) for d in item.decorator_list]
                    if "property" in decorators:
                        fields.add(item.name)
                    else:
                        methods.setdefault(item.name, []).extend(_signatures(item))
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) \
                        and "ClassVar" not in ast.unparse(item.annotation):
                    fields.add(item.target.id)
            classes[node.name] = {"methods": methods, "fields": fields}
            names.add(node.name)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {"classes": classes, "names": names}


@pytest.fixture(scope="module")
def stubs() -> dict[str, Any]:
    return parse_stubs(stub_path().read_text())


@pytest.fixture(scope="module")
def fake(isaacgym_fake_python: str) -> dict[str, Any]:
    result = subprocess.run([isaacgym_fake_python, str(FIXTURES / "isaacgym_fake_surface.py")],
                            capture_output=True, text=True, check=False, timeout=300,
                            env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")})
    assert result.returncode == 0, result.stderr[-3000:]
    surface: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return surface


def _fake_params(entry: list[list[Any]]) -> list[Param]:
    return [(name, kind, has_default, default) for name, kind, has_default, default in entry]


def _matches(fake: list[Param], stub: list[Param]) -> bool:
    if [p[:3] for p in fake] != [p[:3] for p in stub]:
        return False
    return all(s[3] == "?" or f[3] == s[3] for f, s in zip(fake, stub, strict=True) if s[2])


def test_every_name_of_the_fake_gymapi_is_in_the_stubs(fake: dict[str, Any],
                                                       stubs: dict[str, Any]) -> None:
    names = set(fake["classes"]) | set(fake["functions"]) | set(fake["constants"])
    assert sorted(names - stubs["names"]) == []


def test_every_method_has_the_stubs_names_order_and_defaults(
        fake: dict[str, Any], stubs: dict[str, Any]) -> None:
    mismatches, compared = [], 0
    for cls, described in fake["classes"].items():
        stub_methods = stubs["classes"][cls]["methods"]
        for method, entry in described["methods"].items():
            if method not in stub_methods:
                mismatches.append(f"{cls}.{method}: not in the stubs")
                continue
            params = _fake_params(entry["params"])
            compared += 1
            if not any(_matches(params, candidate) for candidate in stub_methods[method]):
                mismatches.append(f"{cls}.{method}{params} vs stub {stub_methods[method]}")
    assert mismatches == []
    assert compared > 150  # the Gym methods the adapter calls, and many more


def test_every_field_of_the_fake_classes_is_the_stubs(fake: dict[str, Any],
                                                      stubs: dict[str, Any]) -> None:
    for cls, described in fake["classes"].items():
        stub_fields = stubs["classes"][cls]["fields"]
        if described["fields"]:  # constructible without arguments, or with properties
            assert set(described["fields"]) == stub_fields, cls


def test_the_adapter_calls_only_what_the_fake_implements(fake: dict[str, Any],
                                                         stubs: dict[str, Any]) -> None:
    source = "\n".join(path.read_text() for path in ADAPTER)
    gym_calls = set(re.findall(r"\bgym\.(\w+)\(", source))
    gymapi_names = set(re.findall(r"\bgymapi\.(\w+)", source))
    gymtorch_calls = set(re.findall(r"\bgymtorch\.(\w+)", source))
    assert {"create_sim", "prepare_sim", "simulate", "get_camera_image"} <= gym_calls
    assert sorted(gym_calls - set(fake["classes"]["Gym"]["methods"])) == []
    assert sorted(gymapi_names - set(fake["classes"]) - set(fake["functions"])
                  - set(fake["constants"])) == []
    assert sorted(gymtorch_calls - set(fake["gymtorch"])) == []


def test_gymtorch_matches_the_sdks_gymtorch(fake: dict[str, Any]) -> None:
    stub = ROOT / "tools" / "typecheck" / "typings" / "isaacgym" / "gymtorch.pyi"
    tree = ast.parse(stub.read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            assert _matches(_fake_params(fake["gymtorch"][node.name]), _from_def(node))
