"""The CUDA data plane's parts that need no GPU: wire form, layout, DLPack, error paths."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import unisim
import unisim_protocol as protocol
from unisim.slots import SlotSpec
from unisim_protocol import arena as arena_layout
from unisim_protocol import cuda_arena, cuda_driver


def _gpu_absent_reason() -> str | None:
    try:
        cuda_driver.driver()
    except cuda_driver.CudaUnavailable as exc:
        return str(exc)
    return None


NO_GPU = _gpu_absent_reason()
needs_no_gpu = pytest.mark.skipif(NO_GPU is None, reason="this machine has a CUDA GPU, so the "
                                  "no-GPU error path cannot be reached here")


def _declaration(**changes: object) -> dict[str, object]:
    declaration: dict[str, object] = {
        "device_uuid": bytes(range(16)),
        "memory": b"\x01" * 64,
        "size": 1024,
        "events": {"ctrl_ready": b"\x02" * 64},
        "slots": [{"name": "ctrl", "dtype": "<f4", "shape": [4, 8], "offset": 0},
                  {"name": "qpos", "dtype": "<f4", "shape": [4, 15], "offset": 256}],
    }
    declaration.update(changes)
    return declaration


def test_handles_cross_the_wire_as_exact_bytes() -> None:
    handle = bytes(range(64))
    decoded = protocol.decode(protocol.encode({"cuda": _declaration(memory=handle)}))
    assert decoded["cuda"]["memory"] == handle
    assert bytes(cuda_driver.decode_handle(decoded["cuda"]["memory"])) == handle
    assert cuda_arena.check_declaration(decoded["cuda"])["device_uuid"] == bytes(range(16))


@pytest.mark.parametrize("bad", [b"\x00" * 63, b"\x00" * 65, "a" * 64, None])
def test_a_handle_of_the_wrong_size_or_type_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="CUDA IPC handle is 64 bytes"):
        cuda_driver.decode_handle(bad)


@pytest.mark.parametrize("changes, message", [
    ({"device_uuid": b"\x00" * 15}, "device_uuid must be 16 bytes"),
    ({"events": {}}, "64 bytes, got 'NoneType'"),
    ({"slots": [{"name": "qpos", "dtype": "<f4", "shape": [4, 15], "offset": 100}]},
     "slot qpos .offset 100, 240 bytes. is not an aligned part"),
    ({"slots": [{"name": "qpos", "dtype": "<f8", "shape": [4, 64], "offset": 0}]},
     "slot qpos .offset 0, 2048 bytes. is not an aligned part of the 1024-byte arena"),
])
def test_a_malformed_declaration_is_refused_by_name(changes: dict[str, object],
                                                    message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cuda_arena.check_declaration(_declaration(**changes))


def test_a_declaration_missing_a_key_names_it() -> None:
    declaration = _declaration()
    del declaration["events"]
    with pytest.raises(ValueError, match="lacks 'events'"):
        cuda_arena.check_declaration(declaration)


def test_regions_are_packed_at_aligned_offsets() -> None:
    specs = [SlotSpec("ctrl", "<f4", (8,)), SlotSpec("qpos", "<f4", (15,)),
             SlotSpec("qvel", "<f4", (14,))]
    offsets, size = arena_layout.offsets(specs, 1000, align=cuda_driver.ALIGN)
    assert offsets == {"ctrl": 0, "qpos": 32000, "qvel": 92160}
    assert all(offset % cuda_driver.ALIGN == 0 for offset in offsets.values())
    assert size == 92160 + 56064 and size % cuda_driver.ALIGN == 0
    assert arena_layout.offsets([], 10, align=cuda_driver.ALIGN) == ({}, cuda_driver.ALIGN)


def test_the_isaacgym_slots_fit_the_device_arena() -> None:
    """IsaacGym publishes float32 body tensors and a uint8 image beside float64 qpos: every
    region still starts aligned, none overlaps, and the worker's check accepts them."""
    rows, nbody = 3, 9
    specs = [SlotSpec("ctrl", "<f8", (8,)), SlotSpec("qpos", "<f8", (15,)),
             SlotSpec("qvel", "<f8", (14,)), SlotSpec("body_states", "<f4", (nbody, 13)),
             SlotSpec("contact_forces", "<f4", (nbody, 3)), SlotSpec("image", "|u1", (5, 7, 3))]
    offsets, size = arena_layout.offsets(specs, rows, align=cuda_driver.ALIGN)
    slots = [{"name": s.name, "dtype": s.dtype, "shape": [rows, *s.shape],
              "offset": offsets[s.name]} for s in specs]
    cuda_arena.check_declaration(_declaration(size=size, slots=slots))
    spans = sorted((offsets[s.name], offsets[s.name] + s.nbytes(rows)) for s in specs)
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(spans))
    assert spans[-1][1] <= size
    image = cuda_arena.DeviceRegion("image", 0x7F0000000000 + offsets["image"], "|u1",
                                  (rows, 5, 7, 3), 0, owner=None)
    assert image.__cuda_array_interface__["typestr"] == "|u1" and image.nbytes == rows * 105


def _host_region(array: np.ndarray) -> cuda_arena.DeviceRegion:
    """A region over host memory (DLPack device kCPU), to check the DLPack export here."""
    return cuda_arena.DeviceRegion("qpos", array.ctypes.data, array.dtype, array.shape, 0,
                                 owner=array, device_type=1)


def test_a_region_exports_a_zero_copy_dlpack_tensor() -> None:
    memory = np.arange(12, dtype=np.float32).reshape(3, 4)
    imported = np.from_dlpack(_host_region(memory))
    assert imported.shape == (3, 4) and imported.dtype == np.float32
    memory[1, 2] = 42.0
    assert imported[1, 2] == 42.0  # the same memory, not a copy


def test_a_region_is_consumed_by_torch_without_a_copy() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed in this environment")
    memory = np.zeros((2, 3), dtype=np.float64)
    tensor = torch.from_dlpack(_host_region(memory))
    tensor[1, 1] = 7.0
    assert memory[1, 1] == 7.0


def test_a_region_is_imported_by_jax() -> None:
    dlpack = pytest.importorskip("jax.dlpack", reason="jax is not installed in this environment")
    memory = np.arange(6, dtype=np.float32).reshape(2, 3)
    imported = dlpack.from_dlpack(_host_region(memory))
    assert imported.shape == (2, 3) and np.asarray(imported).tolist() == memory.tolist()


def test_a_region_describes_itself_to_cuda_array_interface_consumers() -> None:
    region = cuda_arena.DeviceRegion("ctrl", 0x7F0000000000, "<f4", (16, 8), 0, owner=None)
    interface = region.__cuda_array_interface__
    assert interface == {"shape": (16, 8), "typestr": "<f4", "data": (0x7F0000000000, False),
                         "version": 3, "strides": None, "stream": None}
    assert region.nbytes == 16 * 8 * 4


def test_a_region_refuses_an_export_it_cannot_honour() -> None:
    region = _host_region(np.zeros(4, dtype=np.float32))
    with pytest.raises(BufferError, match="without copying"):
        region.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="lives on DLPack device"):
        region.__dlpack__(dl_device=(2, 0))
    text = _host_region(np.zeros(4, dtype="U1"))
    with pytest.raises(BufferError, match="cannot be exported"):
        text.__dlpack__()


def test_the_source_pointer_of_a_dlpack_capsule_is_read_and_checked() -> None:
    array = np.arange(10, dtype=np.float32)
    assert cuda_arena.dlpack_pointer(array.__dlpack__(), 40) == array.ctypes.data
    with pytest.raises(BufferError, match="does not hold 44 bytes"):
        cuda_arena.dlpack_pointer(array.__dlpack__(), 44)
    strided = np.arange(20, dtype=np.float32)[::2]
    with pytest.raises(BufferError, match="not C-contiguous"):
        cuda_arena.dlpack_pointer(strided.__dlpack__(), 40)


def test_uuids_print_as_nvidia_smi_does() -> None:
    uuid = bytes.fromhex("0123456789abcdef0123456789abcdef")
    assert cuda_driver.format_uuid(uuid) == "GPU-01234567-89ab-cdef-0123-456789abcdef"


@needs_no_gpu
def test_the_driver_says_why_it_cannot_load() -> None:
    with pytest.raises(cuda_driver.CudaUnavailable, match=r"libcuda\.so\.1"):
        cuda_driver.driver()


@needs_no_gpu
def test_the_cuda_plane_without_a_gpu_is_a_setup_error_naming_the_fix() -> None:
    with pytest.raises(unisim.SetupError) as caught:
        unisim.Backend("mjx", "quadruped", num_envs=4, data_plane="cuda", device=0)
    assert "data_plane='cuda' needs a CUDA GPU" in str(caught.value)
    assert "data_plane='shm'" in caught.value.hint


@pytest.mark.parametrize("kwargs, message", [
    ({"data_plane": "nvlink"}, "data_plane must be one of"),
    ({"device": -1}, "device must be a GPU ordinal"),
    ({"device": "cuda:0"}, "device must be a GPU ordinal"),
])
def test_bad_data_plane_arguments_are_refused_before_any_worker_starts(
        kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        unisim.Backend("mujoco", "cartpole", num_envs=2, **kwargs)  # type: ignore[arg-type]
