"""Device arenas shared by CUDA IPC: their declaration, regions, and the worker's mapping.

The host allocates one arena of device memory and declares it (the ``cuda`` entry of
ATTACH: device UUID, memory and event handles, slots at ``ALIGN``-aligned offsets); the
worker opens it as a ``DeviceMapping``. A ``DeviceRegion`` is a view of part of an arena
that any framework can take (``__cuda_array_interface__``, ``__dlpack__``). Python 3.8,
stdlib, numpy and ``cuda_driver``.
"""

import ctypes
import sys

import numpy as np

from .cuda_driver import ALIGN, UUID_BYTES, decode_handle, describe_value, driver

DLPACK_CUDA = 2  # DLDeviceType kDLCUDA
_DLPACK_NAME = b"dltensor"
_DLPACK_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}  # numpy kind -> DLDataTypeCode


def check_declaration(declaration):
    """The device-arena declaration of an ATTACH payload, validated; raises ``ValueError``."""
    for key in ("device_uuid", "memory", "size", "events", "slots"):
        if key not in declaration:
            raise ValueError("the CUDA arena declaration lacks %r" % key)
    uuid = declaration["device_uuid"]
    if not isinstance(uuid, bytes) or len(uuid) != UUID_BYTES:
        raise ValueError("device_uuid must be %d bytes, got %r"
                         % (UUID_BYTES, describe_value(uuid)))
    decode_handle(declaration["memory"])
    decode_handle(declaration["events"].get("ctrl_ready"))
    size = int(declaration["size"])
    for slot in declaration["slots"]:
        dtype = np.dtype(slot["dtype"])
        nbytes = int(np.prod(slot["shape"], dtype=np.int64)) * dtype.itemsize
        offset = int(slot["offset"])
        if offset < 0 or offset % ALIGN or offset + nbytes > size:
            raise ValueError("slot %s (offset %d, %d bytes) is not an aligned part of the %d-byte "
                             "arena" % (slot["name"], offset, nbytes, size))
    return declaration


# -- regions: views of device memory for any framework -----------------------------------


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLManagedTensor._fields_ = [
    ("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))),
]
# Consumers call the deleter when done; the region keeps the memory, so there is nothing to free.
_keep = _DLManagedTensor._fields_[2][1](lambda managed: None)
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = (ctypes.py_object, ctypes.c_char_p)


class DeviceRegion:
    """``shape`` elements of ``dtype`` at device address ``pointer``, C-contiguous.

    Exposes ``__cuda_array_interface__`` (torch, CuPy, Numba) and ``__dlpack__`` (JAX,
    torch). ``owner`` is kept alive by the region, and so by every tensor made from it.
    When ``ready`` is an event, a DLPack consumer's stream waits on it before using the
    data, so importing the region is ordered after the producer's writes; a consumer that
    names no stream gets data already complete (this thread waits for the event).
    """

    def __init__(self, name, pointer, dtype, shape, ordinal, owner, ready=None,
                 device_type=DLPACK_CUDA):
        self.name = name
        self.pointer = pointer
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(n) for n in shape)
        self.ordinal = ordinal
        self.owner = owner
        self.ready = ready
        self.device_type = device_type
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self.cpu_waits = 0
        self._managed = None

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.pointer, False),
                "version": 3, "strides": None, "stream": None}

    def __dlpack_device__(self):
        return (self.device_type, self.ordinal)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A legacy (unversioned) DLPack capsule over the region; consumers accept it."""
        if copy:
            raise BufferError("a device region is exported without copying")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError("region %s lives on DLPack device %s, not %s"
                              % (self.name, self.__dlpack_device__(), tuple(dl_device)))
        if self.ready is not None and stream != -1:
            if stream is None:
                if not self.cpu_waits:
                    sys.stderr.write("unisim cuda_ipc: the consumer of %s gives no stream; "
                                     "waiting for the producer on the CPU\n" % self.name)
                self.cpu_waits += 1
                driver().wait_on_cpu(self.ready)
            else:
                driver().wait(stream, self.ready)
        if self._managed is None:
            self._managed = self._describe()
        return _capsule_new(ctypes.addressof(self._managed), _DLPACK_NAME, None)

    def _describe(self):
        """The DLManagedTensor, built once and kept for the region's life."""
        if self.dtype.kind not in _DLPACK_CODES or not self.dtype.isnative:
            raise BufferError("dtype %s cannot be exported by DLPack" % self.dtype)
        self._shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        managed = _DLManagedTensor()
        tensor = managed.dl_tensor
        tensor.data = self.pointer
        tensor.device = _DLDevice(self.device_type, self.ordinal)
        tensor.ndim = len(self.shape)
        tensor.dtype = _DLDataType(_DLPACK_CODES[self.dtype.kind], self.dtype.itemsize * 8, 1)
        tensor.shape = self._shape
        managed.deleter = _keep
        return managed

    def __repr__(self):
        return "<DeviceRegion %s %s %s at 0x%x on GPU %d>" % (
            self.name, self.dtype, self.shape, self.pointer, self.ordinal)


def dlpack_pointer(capsule, nbytes):
    """Device address of an unconsumed, C-contiguous DLPack capsule holding ``nbytes``."""
    address = _capsule_pointer(capsule, _DLPACK_NAME)
    tensor = _DLManagedTensor.from_address(address).dl_tensor
    shape = [tensor.shape[i] for i in range(tensor.ndim)]
    itemsize = tensor.dtype.bits // 8
    if tensor.strides:
        expected = itemsize
        for axis in reversed(range(tensor.ndim)):
            if shape[axis] > 1 and tensor.strides[axis] * itemsize != expected:
                raise BufferError("DLPack tensor of shape %s is not C-contiguous" % shape)
            expected *= shape[axis]
    if int(np.prod(shape, dtype=np.int64)) * itemsize != nbytes:
        raise BufferError("DLPack tensor of shape %s x %d bytes does not hold %d bytes"
                          % (shape, itemsize, nbytes))
    return tensor.data + tensor.byte_offset


# -- the worker's side -------------------------------------------------------------------


class DeviceMapping:
    """The host's device arena opened in this process: regions by name, its event, a stream.

    ``publish`` copies device arrays (anything with ``__dlpack__``, e.g. JAX arrays) into
    regions on this mapping's stream, which first waits until each array is ready, and waits
    for the copies: the reply goes once the state is in the arena, so the host's next
    kernels find it there with no event to wait on (a host stream left waiting on a pending
    event from this process slowed the next steps: the GPU serves the two processes'
    contexts in turn; docs/cuda-ipc.md). A framework that
    cannot order its export on a foreign stream is asked for a plain export instead, which
    waits on the CPU (and says so once).
    """

    def __init__(self, declaration):
        declaration = check_declaration(declaration)
        drv = driver()
        self.ordinal = drv.ordinal_of(declaration["device_uuid"])
        drv.retain_context(self.ordinal)
        self._closers = [lambda: drv.release_context(self.ordinal)]
        try:
            self.base = drv.open_memory(declaration["memory"])
            self._closers.append(lambda: drv.close_memory(self.base))
            events = declaration["events"]
            self.ctrl_ready = drv.open_event(events["ctrl_ready"])
            self._closers.append(lambda: drv.destroy_event(self.ctrl_ready))
            self.stream = drv.create_stream()
            self._closers.append(lambda: drv.destroy_stream(self.stream))
        except BaseException:
            self.close()
            raise
        self.regions = {
            slot["name"]: DeviceRegion(slot["name"], self.base + int(slot["offset"]),
                                       slot["dtype"], slot["shape"], self.ordinal, self,
                                       ready=self.ctrl_ready)
            for slot in declaration["slots"]
        }
        self.stream_exports = True

    def _export(self, array):
        if not self.stream_exports:
            return array.__dlpack__()
        try:
            return array.__dlpack__(stream=self.stream)
        except Exception as exc:  # frameworks raise their own types for this
            capsule = array.__dlpack__()  # raises too if the array itself is broken
            sys.stderr.write("unisim cuda_ipc: %s cannot export on a given stream (%s); "
                             "waiting on the CPU instead\n" % (type(array).__name__, exc))
            self.stream_exports = False
            return capsule

    def publish(self, arrays):
        """Copy ``{region name: device array}`` into the arena and wait for the copies (the
        capsules, held until then, keep the sources alive)."""
        drv = driver()
        held = []
        for name, array in arrays.items():
            region = self.regions[name]
            capsule = self._export(array)
            drv.copy_async(region.pointer, dlpack_pointer(capsule, region.nbytes), region.nbytes,
                           self.stream)
            held.append(capsule)
        drv.synchronize(self.stream)

    def close(self):
        """Wait for pending copies, then release everything this process opened."""
        drv = driver()
        if getattr(self, "stream", None):
            drv.synchronize(self.stream)
        closers, self._closers = self._closers, []
        for close in reversed(closers):
            close()
