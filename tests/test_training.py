"""``python -m unisim train``: a short seeded PPO run through a Python 3.8 worker learns."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import imageio.v3 as iio
import pytest

from unisim import cli
from unisim.interpreter import find_python38
from unisim.training.progress import read_metrics
from unisim.training.run import train


def test_ppo_through_a_python38_worker_improves_the_return(tmp_path: Path, py38: str) -> None:
    lines: list[str] = []
    result = train("cartpole", iterations=12, num_envs=64, seed=0, python=py38,
                   out=tmp_path, video=False, echo=lines.append)
    run = Path(result.run_dir)
    assert run.parent == tmp_path and run.name.startswith("cartpole-")
    assert lines[0] == f"worker on {py38} (from --python)"
    rows = [row for row in read_metrics(run) if "mean_return" in row]
    assert len(rows) >= 10
    first = sum(row["mean_return"] for row in rows[:3]) / 3
    last = sum(row["mean_return"] for row in rows[-3:]) / 3
    assert last > 1.5 * first, (first, last)
    assert (run / "curves.png").stat().st_size > 10_000
    assert Path(result.checkpoint).is_file() and result.checkpoint.endswith("model_11.pt")
    summary = json.loads((run / "summary.json").read_text())
    assert summary["iterations"] == 12 and summary["final_mean_return"] == rows[-1]["mean_return"]
    assert summary["eval_episode_length"] > 0 and summary["video"] is None


def test_cli_train_command_writes_a_run_folder_with_a_video(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["train", "cartpole", "--iterations", "1", "--num-envs", "4",
                     "--python", sys.executable, "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "final_mean_return" in out and "run_dir" in out
    (run,) = tmp_path.glob("cartpole-*")
    assert (run / "model_0.pt").is_file() and (run / "curves.png").is_file()
    frames = iio.imread(run / "policy.mp4", index=None)
    assert frames.shape == (126, 240, 320, 3)  # 250 steps, one frame every 2, and the first
    assert frames.std() > 5  # a rendered scene, not a blank image
    assert json.loads((run / "summary.json").read_text())["video"] == str(run / "policy.mp4")


def test_cli_train_refuses_bad_input_before_starting_anything(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in [(["hopper"], "no task 'hopper'; registered tasks: cartpole, quadruped"),
                          (["cartpole", "--iterations", "0"], "iterations and num_envs must be")]:
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["train", *argv, "--out", str(tmp_path)])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_python38_discovery_falls_back_and_says_why(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("UNISIM_PY38", str(tmp_path / "missing" / "python"))
    monkeypatch.setattr("unisim.interpreter.python38_candidates",
                        lambda: [(str(tmp_path / "missing" / "python"), "UNISIM_PY38")])
    path, message = find_python38()
    assert path is None
    assert "no Python 3.8 worker found (UNISIM_PY38: no such interpreter)" in message
    assert "the worker runs on this interpreter" in message


def test_python38_discovery_finds_the_env_var(py38: str) -> None:
    path, message = find_python38()
    assert path == py38 and "worker on Python 3.8" in message


def test_same_seed_same_machine_gives_bitwise_the_same_run(tmp_path: Path, py38: str) -> None:
    """What docs/training.md promises: seed, machine and versions fix the run exactly."""
    import torch

    runs = [train("cartpole", iterations=4, num_envs=32, seed=3, python=py38,
                  out=tmp_path / str(k), video=False, echo=lambda _: None) for k in range(2)]
    timing = {"wall_s", "collection_s", "learning_s"}
    curves = [[{k: v for k, v in row.items() if k not in timing}
               for row in read_metrics(Path(run.run_dir))] for run in runs]
    assert curves[0] == curves[1] and len(curves[0]) >= 4
    weights = [torch.load(run.checkpoint, weights_only=False)["actor_state_dict"]
               for run in runs]
    for name, tensor in weights[0].items():
        assert torch.equal(tensor, weights[1][name]), name
    assert runs[0].eval_return == runs[1].eval_return
    other = train("cartpole", iterations=4, num_envs=32, seed=4, python=py38,
                  out=tmp_path / "other", video=False, echo=lambda _: None)
    assert other.eval_return != runs[0].eval_return  # the seed does matter
