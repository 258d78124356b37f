"""MJCF models shipped with unisim, by name."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

NAMES = ("cartpole", "quadruped")


def path(name: str) -> Path:
    """Path of the bundled model ``name`` (one of ``NAMES``)."""
    if name not in NAMES:
        raise ValueError(f"no bundled model {name!r}; bundled models: {', '.join(NAMES)}")
    return Path(str(resources.files(__name__) / f"{name}.xml"))


def resolve(model: str | Path) -> str:
    """An MJCF path, a bundled model's name, or an XML string -> what the worker loads."""
    text = str(model)
    if text.lstrip().startswith("<"):
        return text
    if text in NAMES:
        return str(path(text))
    file = Path(text).expanduser()
    if not file.is_file():
        raise FileNotFoundError(
            f"model {text!r} is neither an MJCF file, an XML string nor a bundled model "
            f"({', '.join(NAMES)})")
    return str(file.resolve())
