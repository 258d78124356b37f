"""PROTOCOL.md documents everything that runs: every command and every doorbell word."""

from __future__ import annotations

import re
from pathlib import Path

import unisim_protocol as protocol
from unisim_protocol import schemas

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


def _section(heading: str) -> str:
    """The text under ``heading`` down to the next heading of its level or above."""
    level = heading.split(" ", 1)[0]
    text = DOC.split(heading + "\n", 1)[1]
    ends = [m.start() for m in re.finditer(rf"^#{{1,{len(level)}}} ", text, flags=re.MULTILINE)]
    return text[:ends[0]] if ends else text


def test_every_field_of_every_message_is_documented_in_its_section() -> None:
    """Each field of ``schemas.FIELDS`` is named (`field` or "field") where its message is
    described: a request's under its command's heading, HELLO's, PROGRESS's and ERROR's in
    *Conversation*."""
    for message, fields in schemas.FIELDS.items():
        heading = f"### {message}" if message in HEADINGS else "## Conversation"
        section = _section(heading)
        if heading == "## Conversation":
            assert f"**{message}**" in section, message
        for field in fields:
            assert f"`{field}`" in section or f'"{field}"' in section, \
                f"PROTOCOL.md's {heading!r} does not name {message}'s field {field!r}"


def test_this_check_sees_a_field_the_document_leaves_out() -> None:
    assert "`first_env`" in _section("### INIT")
    assert "`first_env`" not in _section("### STEP")
