"""The GPU data plane: MJX behind unisim (CUDA IPC, host memory) against MJX in-process."""
