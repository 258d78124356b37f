"""unisim's wire protocol, loaded by the host as ``unisim_protocol`` and by workers by file path.

Python 3.8 code using only the stdlib, numpy and msgpack. The format is specified in
PROTOCOL.md beside this file.
"""

from . import doorbell
from .codec import WireTypeError, decode, encode, find_unsafe
from .framing import MAX_FRAME, VERSION, FrameError, FrameReader, FrameWriter, StreamClosed
from .messages import (
    COMMAND_NAMES,
    Command,
    Kind,
    MessageError,
    describe,
    pack,
    unpack,
)

__all__ = [
    "COMMAND_NAMES",
    "MAX_FRAME",
    "VERSION",
    "Command",
    "FrameError",
    "FrameReader",
    "FrameWriter",
    "Kind",
    "MessageError",
    "StreamClosed",
    "WireTypeError",
    "decode",
    "describe",
    "doorbell",
    "encode",
    "find_unsafe",
    "pack",
    "unpack",
]
