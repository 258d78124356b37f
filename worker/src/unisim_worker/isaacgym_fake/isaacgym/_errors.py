"""The fake's own error types, and the SDK's ways of reporting a failure or letting one pass.

The fake raises only where the SDK fails too, or where it cannot model what was asked (its
message then says so: ``fake_limit``). Where the SDK accepts a call that is likely a
mistake (rows a setter drops on the GPU pipeline, say), the fake warns once on stderr;
``UNISIM_FAKE_STRICT=1`` in the environment (read once, at import) makes those warnings
errors, for users who want their tests to stop there. docs/isaacgym.md ("Where the fake
raises") lists every raise with what the SDK does there.
"""

import os
import sys

STRICT_ENV = "UNISIM_FAKE_STRICT"
STRICT = os.environ.get(STRICT_ENV, "").strip() not in ("", "0")
_warned = set()


class FakeError(RuntimeError):
    """A call the SDK refuses too, or one the fake cannot model; named with its fix."""


class UnwrapError(RuntimeError):
    """``gymtorch.unwrap_tensor`` refused a tensor, as the SDK's gymtorch does (it raises a
    plain Exception; this is one too, and a RuntimeError as every refusal of the fake)."""


def log_error(message):
    """The SDK logs its failures on stderr and returns None or False: say why here."""
    print("[isaacgym fake] Error: %s" % message, file=sys.stderr)


def fake_limit(message):
    """A FakeError for what the SDK does but the fake cannot model, saying so."""
    return FakeError("%s; this is a limit of the SDK fake, not of the SDK" % message)


def suspect(key, message):
    """A call the SDK accepts silently but that is likely a mistake: a warning on stderr,
    once per ``key`` in this process; a FakeError instead under ``UNISIM_FAKE_STRICT=1``."""
    if STRICT:
        raise FakeError("%s (%s=1 makes this warning an error; the SDK accepts the call)"
                        % (message, STRICT_ENV))
    if key not in _warned:
        _warned.add(key)
        print("[isaacgym fake] Warning: %s (warned once; %s=1 makes it an error)"
              % (message, STRICT_ENV), file=sys.stderr)
