"""CUDA IPC through the driver API with ctypes: one device arena shared by two processes.

Host and worker may run different frameworks (another torch, or JAX), so nothing here goes
through a framework's own IPC, whose pickles depend on its version. The host allocates
plain device memory (``cuMemAlloc``) and exports raw 64-byte IPC handles for it and for
two interprocess events; the worker opens them. Ordering needs no CPU synchronisation:
the host records ``ctrl_ready`` on its stream after writing inputs, the worker's streams
wait on it, the worker copies its outputs into the arena and records ``state_ready``, and
the host's stream waits on that.

This one module binds the driver for both sides (the host imports it as
``unisim.worker.cuda_ipc``, the worker as ``cuda_ipc``). Python 3.8, stdlib and numpy;
libcuda is loaded on first use, so importing this on a machine without a GPU costs nothing.
"""

import ctypes
import sys

import numpy as np

LIBRARY = "libcuda.so.1"
HANDLE_BYTES = 64  # CUipcMemHandle and CUipcEventHandle
UUID_BYTES = 16
ALIGN = 256  # every region starts on this many bytes (XLA and cuBLAS want >= 64)
EVENT_DISABLE_TIMING = 0x2
EVENT_INTERPROCESS = 0x4
IPC_LAZY_ENABLE_PEER_ACCESS = 0x1
STREAM_NON_BLOCKING = 0x1
DLPACK_CUDA = 2  # DLDeviceType kDLCUDA
_DLPACK_NAME = b"dltensor"
_DLPACK_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}  # numpy kind -> DLDataTypeCode


class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's error."""


class CudaUnavailable(CudaError):
    """This process has no usable NVIDIA driver or GPU."""


class IpcHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * HANDLE_BYTES)]


class _Uuid(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_ubyte * UUID_BYTES)]


_int, _uint, _ptr, _size = ctypes.c_int, ctypes.c_uint, ctypes.c_void_p, ctypes.c_size_t
_devptr = ctypes.c_uint64
_out = ctypes.POINTER
_SIGNATURES = {
    "cuInit": (_uint,),
    "cuGetErrorName": (_int, _out(ctypes.c_char_p)),
    "cuDeviceGetCount": (_out(_int),),
    "cuDeviceGet": (_out(_int), _int),
    "cuDeviceGetUuid": (_out(_Uuid), _int),
    "cuDevicePrimaryCtxRetain": (_out(_ptr), _int),
    "cuDevicePrimaryCtxRelease": (_int,),
    "cuCtxSetCurrent": (_ptr,),
    "cuMemAlloc": (_out(_devptr), _size),
    "cuMemFree": (_devptr,),
    "cuMemsetD8": (_devptr, ctypes.c_ubyte, _size),
    "cuMemcpyDtoDAsync": (_devptr, _devptr, _size, _ptr),
    "cuIpcGetMemHandle": (_out(IpcHandle), _devptr),
    "cuIpcOpenMemHandle": (_out(_devptr), IpcHandle, _uint),
    "cuIpcCloseMemHandle": (_devptr,),
    "cuEventCreate": (_out(_ptr), _uint),
    "cuEventDestroy": (_ptr,),
    "cuEventRecord": (_ptr, _ptr),
    "cuEventSynchronize": (_ptr,),
    "cuIpcGetEventHandle": (_out(IpcHandle), _ptr),
    "cuIpcOpenEventHandle": (_out(_ptr), IpcHandle),
    "cuStreamCreate": (_out(_ptr), _uint),
    "cuStreamDestroy": (_ptr,),
    "cuStreamWaitEvent": (_ptr, _ptr, _uint),
    "cuStreamSynchronize": (_ptr,),
}


class Driver:
    """The few libcuda calls unisim needs, each raising ``CudaError`` on failure."""

    def __init__(self, lib):
        self._fns = {}
        for name, argtypes in _SIGNATURES.items():
            # cuda.h maps many names to a ``_v2`` symbol; the plain one is the old ABI.
            fn = getattr(lib, name + "_v2", None) or getattr(lib, name)
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int
            self._fns[name] = fn

    def call(self, name, *args):
        code = self._fns[name](*args)
        if code != 0:
            raise CudaError("%s failed with %s" % (name, self.error_name(code)))

    def error_name(self, code):
        text = ctypes.c_char_p()
        if self._fns["cuGetErrorName"](code, ctypes.byref(text)) != 0 or not text.value:
            return "CUDA error %d" % code
        return "%s (%d)" % (text.value.decode(), code)

    # -- devices and contexts ------------------------------------------------------------

    def device_count(self):
        count = ctypes.c_int()
        self.call("cuDeviceGetCount", ctypes.byref(count))
        return count.value

    def device_uuid(self, ordinal):
        device = ctypes.c_int()
        self.call("cuDeviceGet", ctypes.byref(device), ordinal)
        uuid = _Uuid()
        self.call("cuDeviceGetUuid", ctypes.byref(uuid), device.value)
        return bytes(uuid)

    def ordinal_of(self, uuid):
        """This process's ordinal of the GPU with ``uuid`` (its numbering may differ)."""
        seen = [self.device_uuid(i) for i in range(self.device_count())]
        if uuid not in seen:
            raise CudaError(
                "no GPU visible to this process has UUID %s (visible: %s); host and worker "
                "must share one GPU, check CUDA_VISIBLE_DEVICES on both sides"
                % (format_uuid(uuid), ", ".join(format_uuid(u) for u in seen) or "none"))
        return seen.index(uuid)

    def retain_context(self, ordinal):
        """Retain the device's primary context (the one torch and JAX use); make it current."""
        device = ctypes.c_int()
        self.call("cuDeviceGet", ctypes.byref(device), ordinal)
        context = ctypes.c_void_p()
        self.call("cuDevicePrimaryCtxRetain", ctypes.byref(context), device.value)
        self.call("cuCtxSetCurrent", context)
        return context.value

    def release_context(self, ordinal):
        device = ctypes.c_int()
        self.call("cuDeviceGet", ctypes.byref(device), ordinal)
        self.call("cuDevicePrimaryCtxRelease", device.value)

    def set_current(self, context):
        self.call("cuCtxSetCurrent", context)

    # -- memory ------------------------------------------------------------------------

    def mem_alloc(self, size):
        pointer = _devptr()
        self.call("cuMemAlloc", ctypes.byref(pointer), size)
        return pointer.value

    def mem_free(self, pointer):
        self.call("cuMemFree", pointer)

    def memset(self, pointer, value, size):
        self.call("cuMemsetD8", pointer, value, size)

    def copy_async(self, destination, source, size, stream):
        self.call("cuMemcpyDtoDAsync", destination, source, size, stream)

    def export_memory(self, pointer):
        handle = IpcHandle()
        self.call("cuIpcGetMemHandle", ctypes.byref(handle), pointer)
        return bytes(handle)

    def open_memory(self, handle):
        pointer = _devptr()
        self.call("cuIpcOpenMemHandle", ctypes.byref(pointer), decode_handle(handle),
                  IPC_LAZY_ENABLE_PEER_ACCESS)
        return pointer.value

    def close_memory(self, pointer):
        self.call("cuIpcCloseMemHandle", pointer)

    # -- events and streams ------------------------------------------------------------

    def create_ipc_event(self):
        event = ctypes.c_void_p()
        self.call("cuEventCreate", ctypes.byref(event), EVENT_INTERPROCESS | EVENT_DISABLE_TIMING)
        return event.value

    def export_event(self, event):
        handle = IpcHandle()
        self.call("cuIpcGetEventHandle", ctypes.byref(handle), event)
        return bytes(handle)

    def open_event(self, handle):
        event = ctypes.c_void_p()
        self.call("cuIpcOpenEventHandle", ctypes.byref(event), decode_handle(handle))
        return event.value

    def destroy_event(self, event):
        self.call("cuEventDestroy", event)

    def record(self, event, stream):
        self.call("cuEventRecord", event, stream)

    def wait(self, stream, event):
        self.call("cuStreamWaitEvent", stream, event, 0)

    def wait_on_cpu(self, event):
        self.call("cuEventSynchronize", event)

    def create_stream(self):
        stream = ctypes.c_void_p()
        self.call("cuStreamCreate", ctypes.byref(stream), STREAM_NON_BLOCKING)
        return stream.value

    def destroy_stream(self, stream):
        self.call("cuStreamDestroy", stream)

    def synchronize(self, stream):
        self.call("cuStreamSynchronize", stream)


_driver = None


def driver():
    """The process's ``Driver``, loaded and initialised on first use."""
    global _driver
    if _driver is None:
        try:
            lib = ctypes.CDLL(LIBRARY)
        except OSError as exc:
            raise CudaUnavailable(
                "the NVIDIA driver library %s cannot be loaded (%s): this machine has no "
                "NVIDIA driver, or no GPU is passed through to it" % (LIBRARY, exc)) from None
        loaded = Driver(lib)
        try:
            loaded.call("cuInit", 0)
        except CudaError as exc:
            raise CudaUnavailable("the NVIDIA driver found no usable GPU: %s" % exc) from None
        _driver = loaded
    return _driver


# -- the wire form of an arena ------------------------------------------------------------


def decode_handle(handle):
    """A 64-byte IPC handle from its wire form (msgpack bytes)."""
    if not isinstance(handle, (bytes, bytearray)) or len(handle) != HANDLE_BYTES:
        raise ValueError("a CUDA IPC handle is %d bytes, got %r"
                         % (HANDLE_BYTES, _describe(handle)))
    return IpcHandle.from_buffer_copy(bytes(handle))


def format_uuid(uuid):
    text = bytes(uuid).hex()
    return "GPU-%s-%s-%s-%s-%s" % (text[:8], text[8:12], text[12:16], text[16:20], text[20:])


def check_declaration(declaration):
    """The device-arena declaration of an ATTACH payload, validated; raises ``ValueError``."""
    for key in ("device_uuid", "memory", "size", "events", "slots"):
        if key not in declaration:
            raise ValueError("the CUDA arena declaration lacks %r" % key)
    uuid = declaration["device_uuid"]
    if not isinstance(uuid, bytes) or len(uuid) != UUID_BYTES:
        raise ValueError("device_uuid must be %d bytes, got %r" % (UUID_BYTES, _describe(uuid)))
    decode_handle(declaration["memory"])
    for name in ("ctrl_ready", "state_ready"):
        decode_handle(declaration["events"].get(name))
    size = int(declaration["size"])
    for slot in declaration["slots"]:
        dtype = np.dtype(slot["dtype"])
        nbytes = int(np.prod(slot["shape"], dtype=np.int64)) * dtype.itemsize
        offset = int(slot["offset"])
        if offset < 0 or offset % ALIGN or offset + nbytes > size:
            raise ValueError("slot %s (offset %d, %d bytes) is not an aligned part of the %d-byte "
                             "arena" % (slot["name"], offset, nbytes, size))
    return declaration


def _describe(value):
    if isinstance(value, (bytes, bytearray)):
        return "%d bytes" % len(value)
    return type(value).__name__


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
    """The host's device arena opened in this process: regions by name, events, a stream.

    ``publish`` copies device arrays (anything with ``__dlpack__``, e.g. JAX arrays) into
    regions on this mapping's stream, which first waits until each array is ready, then
    records ``state_ready``. The capsules stay held until the next publish, so the sources
    outlive the asynchronous copies. A framework that cannot order its export on a foreign
    stream is asked for a plain export instead, which waits on the CPU (and says so once).
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
            self.state_ready = drv.open_event(events["state_ready"])
            self._closers.append(lambda: drv.destroy_event(self.state_ready))
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
        self._held = []
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
        """Copy ``{region name: device array}`` into the arena, then record ``state_ready``."""
        drv = driver()
        held = []
        for name, array in arrays.items():
            region = self.regions[name]
            capsule = self._export(array)
            drv.copy_async(region.pointer, dlpack_pointer(capsule, region.nbytes), region.nbytes,
                           self.stream)
            held.append(capsule)
        drv.record(self.state_ready, self.stream)
        self._held = held

    def close(self):
        """Wait for pending copies, then release everything this process opened."""
        drv = driver()
        if getattr(self, "stream", None):
            drv.synchronize(self.stream)
        self._held = []
        closers, self._closers = self._closers, []
        for close in reversed(closers):
            close()
