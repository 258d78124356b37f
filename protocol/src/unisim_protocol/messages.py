"""The protocol's vocabulary: message kinds and commands, each defined here only.

A frame body is the msgpack array ``[kind, id, command, payload]``:

* ``kind``: a ``Kind`` code;
* ``id``: the request id, echoed by the REPLY, ERROR and PROGRESS frames of that request
  (0 for HELLO);
* ``command``: a ``Command`` code, echoed likewise;
* ``payload``: a str-keyed map (see PROTOCOL.md for each command's fields).
"""

from . import codec


class Kind:
    HELLO = 1  # worker -> host, once, unsolicited: versions and engines
    REQUEST = 2  # host -> worker
    REPLY = 3  # worker -> host: the request succeeded
    ERROR = 4  # worker -> host: the request raised; payload is an error record
    PROGRESS = 5  # worker -> host: the request is alive; re-arms the host's deadline


class Command:
    """Commands the host sends. Numbers are fixed forever; never reuse a retired one."""

    INIT = 1  # build the engine; reply: the layout
    ATTACH = 2  # map the host's slots; reply: {}
    STEP = 3  # ctrl slot -> engine -> state slots
    RESET = 4  # reset the envs flagged in the reset slot
    CAPTURE = 5  # render one env's camera into the image slot
    PING = 6  # no-op round trip
    SHUTDOWN = 7  # reply, then exit
    DOORBELL = 8  # from now on, wait on the arena's doorbell line (see doorbell.py)
    RENDER = 9  # render rows of a state slot into rows of image slots (render pool)
    PHYSICS = 10  # apply the physics/push slots to the envs flagged in the reset mask
    DESCRIBE = 11  # an engine's capabilities under its options, before INIT (the split)


def _names(registry):
    return {code: name for name, code in vars(registry).items() if name.isupper()}


KIND_NAMES = _names(Kind)
COMMAND_NAMES = _names(Command)


class MessageError(ValueError):
    """A well-framed body that is not a valid message."""


def pack(kind, request_id, command, payload):
    """Frame body of a message; ``payload`` is checked to be wire-safe."""
    return codec.encode([kind, request_id, command, payload], payload)


def unpack(body):
    """``(kind, id, command, payload)`` of a frame body, checked for shape and codes.

    Exact type checks, which are cheaper than ``isinstance`` on every frame: decoded msgpack
    gives exactly list, dict, int and bool (not an int here)."""
    message = codec.decode(body)
    if type(message) is not list or len(message) != 4:
        raise MessageError("message must be a 4-element array [kind, id, command, payload], got %r"
                           % (_preview(message),))
    kind, request_id, command, payload = message
    if type(kind) is not int or kind not in KIND_NAMES:
        raise MessageError("unknown message kind %r" % (kind,))
    if type(request_id) is not int:
        raise MessageError("request id must be an int, got %r" % (_preview(request_id),))
    if command is not None and (type(command) is not int or command not in COMMAND_NAMES):
        raise MessageError("unknown command code %r" % (command,))
    if type(payload) is not dict:
        raise MessageError("payload must be a map, got %s" % type(payload).__name__)
    return kind, request_id, command, payload


def describe(kind, command):
    """Human-readable name of a message, for errors and logs."""
    name = KIND_NAMES.get(kind, "kind %r" % (kind,))
    if command is None:
        return name
    return "%s %s" % (name, COMMAND_NAMES.get(command, "command %r" % (command,)))


def is_int(value):
    """An int that is not a bool (and so hashable, unlike a list in its place)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _preview(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
