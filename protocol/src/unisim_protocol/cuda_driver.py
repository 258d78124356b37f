"""CUDA IPC through the driver API with ctypes: one device arena shared by two processes.

Host and worker may run different frameworks (another torch, or JAX), so nothing here goes
through a framework's own IPC, whose pickles depend on its version. The host allocates
plain device memory (``cuMemAlloc``) and exports raw 64-byte IPC handles for it and for
an interprocess event; the worker opens them. The host never waits on the CPU: it
records ``ctrl_ready`` on its stream after writing inputs, the worker's streams wait on it,
and the worker copies its outputs into the arena and replies once the copies are done.

This one module binds the driver for both sides (``cuda_arena`` builds the shared arena on
it). Python 3.8, stdlib only; libcuda is loaded on first use, so importing this on a
machine without a GPU costs nothing.
"""

import ctypes

LIBRARY = "libcuda.so.1"
HANDLE_BYTES = 64  # CUipcMemHandle and CUipcEventHandle
UUID_BYTES = 16
ALIGN = 256  # every region starts on this many bytes (XLA and cuBLAS want >= 64)
EVENT_DISABLE_TIMING = 0x2
EVENT_INTERPROCESS = 0x4
IPC_LAZY_ENABLE_PEER_ACCESS = 0x1
STREAM_NON_BLOCKING = 0x1


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


# -- wire forms of handles and UUIDs ------------------------------------------------------------


def decode_handle(handle):
    """A 64-byte IPC handle from its wire form (msgpack bytes)."""
    if not isinstance(handle, (bytes, bytearray)) or len(handle) != HANDLE_BYTES:
        raise ValueError("a CUDA IPC handle is %d bytes, got %r"
                         % (HANDLE_BYTES, describe_value(handle)))
    return IpcHandle.from_buffer_copy(bytes(handle))


def format_uuid(uuid):
    text = bytes(uuid).hex()
    return "GPU-%s-%s-%s-%s-%s" % (text[:8], text[8:12], text[12:16], text[16:20], text[20:])


def describe_value(value):
    """A wire value for an error message: its length if bytes, else its type."""
    if isinstance(value, (bytes, bytearray)):
        return "%d bytes" % len(value)
    return type(value).__name__
