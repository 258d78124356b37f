"""envs/hsgym.yml keeps the pins IsaacGym Preview 4 needs (it cannot be solved here)."""

from __future__ import annotations

from pathlib import Path

from unisim import isaacgym

ENV_FILE = Path(__file__).resolve().parent.parent / "envs" / "hsgym.yml"


def dependencies() -> dict[str, str]:
    """``{package: version spec}`` of the file's conda dependency list."""
    found = {}
    for line in ENV_FILE.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("- ") and ":" not in line:
            spec = line[2:].strip()
            name = spec.split("=")[0].split(">")[0].split("<")[0]
            found[name] = spec[len(name):]
    return found


def test_the_env_is_the_one_discovery_looks_for() -> None:
    assert f"name: {isaacgym.CONDA_ENV}" in ENV_FILE.read_text().splitlines()


def test_the_env_pins_what_isaacgym_preview_4_needs() -> None:
    deps = dependencies()
    assert deps["python"] == "=3.8"  # Preview 4 supports 3.6-3.8
    assert "<1.24" in deps["numpy"]  # isaacgym.torch_utils uses np.float
    assert "ninja" in deps  # the gymtorch JIT
    assert "msgpack-python" in deps  # unisim's worker protocol
    assert deps["pytorch"] == "=1.13.1" and deps["pytorch-cuda"] == "=11.7"
