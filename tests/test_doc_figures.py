"""tools/figures/doc_figures.py: publish writes block and result file; --check catches edits."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "figures"))
import doc_figures  # noqa: E402

sys.path.insert(0, str(ROOT))
from benchmarks.measure import add_saved_options, publish_figures  # noqa: E402


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# x\n")
    (tmp_path / "docs" / "page.md").write_text(
        "intro\n<!-- figures:speed:begin -->\nold\n<!-- figures:speed:end -->\noutro\n")
    return tmp_path


def test_publish_replaces_the_block_and_writes_the_result_file(repo: Path) -> None:
    doc_figures.publish("speed", "| a | 1 |", {"a": 1}, "python measure.py", root=repo)
    assert (repo / "docs" / "page.md").read_text() == (
        "intro\n<!-- figures:speed:begin -->\n| a | 1 |\n<!-- figures:speed:end -->\noutro\n")
    record = json.loads((repo / "docs" / "results" / "speed.json").read_text())
    assert record == {"command": "python measure.py", "block": "| a | 1 |\n", "data": {"a": 1}}
    assert doc_figures.previous("speed", root=repo) == {"a": 1}
    assert doc_figures.problems(repo) == []


def test_check_reports_an_edited_block_a_missing_file_and_a_stray_one(repo: Path) -> None:
    doc_figures.publish("speed", "| a | 1 |\n", {"a": 1}, "python measure.py", root=repo)
    page = repo / "docs" / "page.md"
    page.write_text(page.read_text().replace("| a | 1 |", "| a | 2 |"))
    (found,) = doc_figures.problems(repo)
    assert "figures:speed differs from docs/results/speed.json" in found
    assert "python measure.py" in found and "-| a | 1 |" in found and "+| a | 2 |" in found
    (repo / "README.md").write_text("<!-- figures:other:begin -->\n<!-- figures:other:end -->\n")
    (repo / "docs" / "results" / "gone.json").write_text('{"command": "", "block": "", "data": 0}')
    found = doc_figures.problems(repo)
    assert any("figures:other has no result file docs/results/other.json" in p for p in found)
    assert any("gone.json has no figures:gone block" in p for p in found)


def test_unbalanced_or_duplicate_markers_are_reported(repo: Path) -> None:
    page = repo / "docs" / "page.md"
    page.write_text("<!-- figures:a:begin -->\nx\n")
    assert "has no end marker" in doc_figures.problems(repo)[0]
    page.write_text("<!-- figures:a:begin -->\n<!-- figures:a:end -->\n"
                    "<!-- figures:a:begin -->\n<!-- figures:a:end -->\n")
    assert "marked twice" in doc_figures.problems(repo)[0]
    page.write_text("no markers\n")
    with pytest.raises(ValueError, match="add them where the figures go"):
        doc_figures.publish("absent", "x", 0, "cmd", root=repo)


def test_the_committed_docs_pass_the_check() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "figures" / "doc_figures.py"),
                             "--check"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_invocation_is_the_command_a_user_types(tmp_path: Path) -> None:
    """A module run with -m (the benchmarks) is recorded as ``python -m NAME``, a script by
    its path (relative to the repository where it lies inside it), arguments as given."""
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "__init__.py").write_text("")
    (tmp_path / "probe" / "cmd.py").write_text(
        "from tools.figures.doc_figures import invocation\nprint(invocation())\n")
    env = {"PYTHONPATH": str(ROOT)}

    def shown(*command: str) -> str:
        return subprocess.run([sys.executable, *command], cwd=tmp_path, env=env, check=True,
                              capture_output=True, text=True).stdout.strip()

    assert shown("-m", "probe.cmd", "--n", "a b") == "python -m probe.cmd --n 'a b'"
    script = tmp_path / "probe" / "cmd.py"
    assert shown(str(script), "--quick") == f"python {script} --quick"


def test_measured_figures_go_to_json_and_saved_ones_are_not_rewritten(tmp_path: Path) -> None:
    """``--json`` keeps what a benchmark measured (the GPU machine's runs come back as these
    files), whether or not the benchmark writes it itself; ``--saved`` only reads."""
    parser = argparse.ArgumentParser()
    add_saved_options(parser, "speed")
    measured = tmp_path / "measured.json"
    figures = {"command": "python -m bench", "lines": ["speed 1"], "speed": 1}
    publish_figures(parser.parse_args(["--json", str(measured)]), lambda args: figures)
    assert json.loads(measured.read_text()) == figures

    untouched = tmp_path / "untouched.json"

    def measure(args: argparse.Namespace) -> dict[str, object]:
        raise AssertionError("--saved measured again")

    publish_figures(parser.parse_args(["--saved", str(measured), "--json", str(untouched)]),
                    measure)
    assert not untouched.exists()
