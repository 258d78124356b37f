"""msgpack encoding of frame bodies, restricted to wire-safe types.

Wire-safe: None, bool, int, float, str, bytes, lists/tuples and str-keyed maps of
them, and small numpy arrays, which travel as msgpack extension type 1 holding
``[dtype string, shape, raw bytes]``. Anything else (pickled objects included) is
refused on both sides. Python 3.8: stdlib, numpy and msgpack only.
"""

import msgpack
import numpy as np

NDARRAY_EXT = 1
MAX_INLINE_ARRAY = 1 << 20  # bytes; bulk data belongs in shared-memory slots
_SCALARS = (type(None), bool, int, float, str, bytes)
_PLAIN = frozenset((type(None), bool, float, str, bytes))  # wire-safe whatever their value
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 64) - 1  # what msgpack can carry


class WireTypeError(TypeError):
    """A value that may not cross the wire."""


def _default(obj):
    """Called by msgpack for the numpy values ``find_unsafe`` has already admitted."""
    if isinstance(obj, np.ndarray):
        array = np.ascontiguousarray(obj)
        body = [array.dtype.str, list(array.shape), array.tobytes()]
        return msgpack.ExtType(NDARRAY_EXT, msgpack.packb(body, use_bin_type=True))
    return obj.item()


def _ext_hook(code, data):
    if code != NDARRAY_EXT:
        raise WireTypeError("unknown msgpack extension type %d" % code)
    dtype, shape, raw = msgpack.unpackb(data, raw=False)
    dtype = np.dtype(dtype)
    if dtype.kind not in "biuf":
        raise WireTypeError("array of dtype %s is not wire-safe" % dtype)
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


_packer = msgpack.Packer(default=_default, use_bin_type=True, datetime=False)


def encode(obj, part=None):
    """msgpack bytes of ``obj``; ``WireTypeError`` names the offending value's path.

    With ``part``, only that part of ``obj`` is checked: the caller made the rest (a
    message's kind, id and command around its payload), and on Python 3.8 checking those
    ints took longer than packing the whole message."""
    checked = obj if part is None else part
    empty = type(checked) is dict and not checked  # most payloads: a STEP's, a plain REPLY's
    bad = None if empty or _safe(checked) else find_unsafe(checked)
    if bad is not None:
        raise WireTypeError(
            "cannot encode message: the value at %s is not wire-safe (send None, bool, "
            "int, float, str, bytes, lists, str-keyed dicts or numeric numpy arrays "
            "under %d bytes)" % (bad, MAX_INLINE_ARRAY)
        )
    return _packer.pack(obj)


def decode(data):
    """Object from msgpack bytes; refuses trailing bytes, non-str keys, unknown extensions."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=True, ext_hook=_ext_hook)
    except WireTypeError:
        raise
    except Exception as exc:  # msgpack raises several unrelated types for bad input
        raise WireTypeError(
            "undecodable message body (%s: %s)" % (type(exc).__name__, exc)) from None


def _safe(obj):
    """Whether ``obj`` is wire-safe: ``find_unsafe`` without building paths, for the common
    case (every message is checked; a path is only needed to name a failure). A container's
    scalars are checked inline, without a call per item: they are most of every message."""
    kind = type(obj)
    if kind is dict:
        items = obj.values()
        for key in obj:
            if type(key) is not str:
                return False
    elif kind is list or kind is tuple:
        items = obj
    elif kind is int:
        return _INT_MIN <= obj <= _INT_MAX
    else:
        return kind in _PLAIN or find_unsafe(obj) is None
    for item in items:
        kind = type(item)
        if kind is int:
            if not _INT_MIN <= item <= _INT_MAX:
                return False
        elif kind not in _PLAIN and not _safe(item):
            return False
    return True


def find_unsafe(obj, path="$"):
    """Path of the first value in ``obj`` that is not wire-safe, or None if all are."""
    kind = type(obj)
    if kind is dict and not obj:
        return None
    if kind is int:
        return None if _INT_MIN <= obj <= _INT_MAX else path
    if kind in _SCALARS:
        return None
    if isinstance(obj, np.ndarray):
        ok = obj.dtype.kind in "biuf" and obj.nbytes <= MAX_INLINE_ARRAY
        return None if ok else path
    if isinstance(obj, np.generic):
        return None if obj.dtype.kind in "biuf" else path
    if isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            bad = find_unsafe(item, "%s[%d]" % (path, i))
            if bad:
                return bad
        return None
    if isinstance(obj, dict):
        for key, value in obj.items():
            if not isinstance(key, str):
                return "%s{key %r}" % (path, key)
            bad = find_unsafe(value, "%s.%s" % (path, key))
            if bad:
                return bad
        return None
    return path
