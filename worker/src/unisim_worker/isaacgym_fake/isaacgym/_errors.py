"""The fake's own error types, and the SDK's way of reporting a failure."""

import sys


class FakeError(RuntimeError):
    """A misuse the real SDK would not report (or would crash on); named with its fix."""


class UnwrapError(RuntimeError):
    """``gymtorch.unwrap_tensor`` refused a tensor, as the SDK's gymtorch does (it raises a
    plain Exception; this is one too, and a RuntimeError as every refusal of the fake)."""


def log_error(message):
    """The SDK logs its failures on stderr and returns None or False: say why here."""
    print("[isaacgym fake] Error: %s" % message, file=sys.stderr)
