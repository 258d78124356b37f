"""PROTOCOL.md documents everything that runs: every command and every doorbell word."""

from __future__ import annotations

import re
from pathlib import Path

import unisim.protocol as protocol

DOC = (Path(protocol.__file__).resolve().parent / "PROTOCOL.md").read_text()
HEADINGS = set(re.findall(r"^#{2,4} (.+)$", DOC, flags=re.MULTILINE))


def test_every_command_has_its_section() -> None:
    for code, name in protocol.COMMAND_NAMES.items():
        assert name in HEADINGS, f"PROTOCOL.md has no section '### {name}'"
        section = DOC.split(f"### {name}\n", 1)[1]
        assert section.lstrip().startswith(f"Code {code}."), name


def test_every_doorbell_word_has_its_section() -> None:
    bell = protocol.doorbell
    for index, name in enumerate(bell.WORD_NAMES):
        assert getattr(bell, name) == index
        assert f"word {index}: {name}" in HEADINGS, name
    for name in ("CMD_PIPE", "CMD_STEP", "STATUS_OK", "STATUS_PIPE"):
        assert f"`{getattr(bell, name)}` ({name})" in DOC, name
