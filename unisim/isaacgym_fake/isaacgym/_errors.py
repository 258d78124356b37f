"""The fake's own error type."""


class FakeError(RuntimeError):
    """A misuse the real SDK would not report (or would crash on); named with its fix."""


class UnwrapError(RuntimeError):
    """``gymtorch.unwrap_tensor`` refused a tensor, as the SDK's gymtorch does (it raises a
    plain Exception; this is one too, and a RuntimeError as every refusal of the fake)."""
