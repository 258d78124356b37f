"""The trust boundary: no pickle on the wire, private memory, a sanitized worker environment."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

import unisim_protocol
from unisim import slots
from unisim.testing import mock_backend

ROOT = Path(__file__).resolve().parent.parent


def test_no_pickle_in_the_protocol_or_the_worker() -> None:
    sources = [*ROOT.glob("protocol/src/**/*.py"), *ROOT.glob("worker/src/unisim_worker/*.py"),
               *ROOT.glob("worker/src/unisim_worker/engines/**/*.py"),
               ROOT / "unisim" / "channel.py", ROOT / "unisim" / "slots.py"]
    assert len(sources) > 10
    for source in sources:
        text = source.read_text()
        assert not re.search(r"\b(c?pickle|marshal|shelve|dill)\b", text), source


def test_segments_are_private_and_unguessable(monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[slots.Arena] = []
    original = slots.Arena.__init__

    def spy(self: slots.Arena, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        created.append(self)
        mode = stat.S_IMODE(os.stat(slots.SHM_DIR / self.name).st_mode)
        assert mode == 0o600, oct(mode)

    monkeypatch.setattr(slots.Arena, "__init__", spy)
    with mock_backend(2):
        pass
    with mock_backend(2):
        pass
    names = [arena.name for arena in created]
    assert len(set(names)) == 2
    for name in names:
        prefix, pid, token = name.split("-")
        assert prefix == "unisim" and pid == str(os.getpid()) and len(token) == 24


def test_worker_gets_no_pythonpath_or_pythonhome(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/somewhere/hostile")
    monkeypatch.setenv("PYTHONSTARTUP", "/somewhere/hostile.py")
    monkeypatch.setenv("UNISIM_MARKER", "kept")
    with mock_backend(2) as sim:
        raw = Path(f"/proc/{sim.worker_pid}/environ").read_bytes().split(b"\0")
        env = dict(item.split(b"=", 1) for item in raw if b"=" in item)
        cmdline = Path(f"/proc/{sim.worker_pid}/cmdline").read_bytes().split(b"\0")
    assert b"PYTHONPATH" not in env and b"PYTHONSTARTUP" not in env
    assert env[b"UNISIM_MARKER"] == b"kept"
    assert not cmdline[0].endswith((b"sh", b"bash"))  # started directly, no shell


def test_unsafe_payloads_are_refused_before_sending() -> None:
    with mock_backend(2) as sim:
        with pytest.raises(unisim_protocol.WireTypeError, match="not wire-safe"):
            sim.request(unisim_protocol.Command.PING, {"blob": object()})
        sim.step()  # nothing was sent, the backend is fine
