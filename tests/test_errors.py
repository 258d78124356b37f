"""Every error the host raises is defined in ``unisim/errors.py``, and state is checked with
named errors, not ``assert`` (which ``python -O`` strips)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import unisim
import unisim.testing
from unisim import errors
from unisim.testing import mock_backend

HOST = Path(unisim.__file__).resolve().parent


def host_modules() -> list[Path]:
    """The host's modules, less the worker, the shared core and the IsaacGym SDK fake (another
    library's errors, faked): folders inside the host's that are not host code."""
    others = [HOST / "worker", HOST / "protocol", HOST / "isaacgym_fake"]
    return sorted(p for p in HOST.rglob("*.py")
                  if p.name != "errors.py" and not any(p.is_relative_to(o) for o in others))


def test_every_error_class_lives_in_errors_py() -> None:
    for path in host_modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
                assert not any(b.endswith(("Error", "Exception", "Died", "Dead", "Timeout"))
                               for b in bases), f"{path}:{node.lineno} defines {node.name}"


def test_no_assert_checks_state_in_host_code() -> None:
    for path in host_modules():
        if "testing" in path.parts:
            continue  # the test kit's own checks are test code
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            assert not isinstance(node, ast.Assert), f"{path}:{node.lineno} uses assert"


def test_every_error_is_exported_and_derives_from_unisim_error() -> None:
    defined = [v for v in vars(errors).values() if isinstance(v, type)
               and issubclass(v, Exception) and v.__module__ == errors.__name__]
    for error in defined:
        if error is errors.LeakError:  # the test kit's failure, exported by unisim.testing
            assert unisim.testing.LeakError is error
            continue
        assert issubclass(error, unisim.UnisimError)
        assert getattr(unisim, error.__name__) is error


def test_waiting_with_no_request_in_flight_is_a_state_error() -> None:
    with mock_backend(2) as sim:
        channel = sim._pool.members[0].channel
        with pytest.raises(unisim.StateError, match="no request in flight"):
            channel.wait()
        sim.step()  # the channel is still fine
