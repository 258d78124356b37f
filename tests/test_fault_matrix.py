"""The fault matrix: every fault, in every phase, detected by its own cause, nothing leaked.

A crash, a stray or corrupt frame is raised as its typed error while deadlines of ``LONG``
are armed: had the host noticed it only at a deadline, the error would be a WorkerTimeout.
A hang is a WorkerTimeout that names its deadline. Times are measured, never asserted.

Each case records what the user saw and how long detection took into the file named by
``UNISIM_FAULT_MATRIX`` (default ``build/fault-matrix.jsonl``);
``tools/reliability/fault_matrix.py`` renders docs/reliability.md's table from it. The kit's
leak guard (processes, shared memory, descriptors) runs around every test (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import unisim
from unisim.process import WorkerProcess
from unisim.slots import PREFIX, SHM_DIR, reap_orphans
from unisim.testing import Fault, mock_backend

MATRIX = Path(os.environ.get("UNISIM_FAULT_MATRIX", "build/fault-matrix.jsonl"))
LONG = 60.0  # seconds: the deadlines armed where a fault must be found by its own cause
STEP_TIMEOUT, SETUP_TIMEOUT = 0.5, 1.5
Record = Callable[[str, str, "BaseException | str", float], None]
# One process of a parallel run (pytest-xdist) writes the whole matrix file.
pytestmark = pytest.mark.xdist_group("fault-matrix")


@pytest.fixture(scope="session")
def matrix_file() -> Path:
    MATRIX.parent.mkdir(parents=True, exist_ok=True)
    MATRIX.write_text("")
    return MATRIX


@pytest.fixture
def record(matrix_file: Path) -> Record:
    def add(fault: str, phase: str, error: BaseException | str, seconds: float) -> None:
        if isinstance(error, str):
            seen = error
        else:
            cause = error.__cause__
            seen = type(error).__name__ + (f" (from {type(cause).__name__})" if cause else "")
        with matrix_file.open("a") as out:
            out.write(json.dumps({"fault": fault, "phase": phase, "seen": seen,
                                  "seconds": round(seconds, 3)}) + "\n")
    return add


def stand_in(tmp_path: Path, body: str) -> str:
    """An executable that is not a unisim worker (it ignores the worker's arguments)."""
    script = tmp_path / "not-a-worker"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    return str(script)


def timed(call: Callable[[], object]) -> tuple[BaseException, float]:
    start = time.monotonic()
    try:
        call()
    except BaseException as exc:
        return exc, time.monotonic() - start
    raise AssertionError("the fault went unnoticed")


# -- crashes ---------------------------------------------------------------------------

CRASHES = {"SIGKILL": (Fault.kill, -signal.SIGKILL), "segfault": (Fault.segfault, -11),
           "os._exit(3)": (Fault.exit, 3)}


@pytest.mark.parametrize("phase", ["INIT", "STEP", "RESET"])
@pytest.mark.parametrize("kind", list(CRASHES))
def test_crash_in_a_command(kind: str, phase: str, record: Record) -> None:
    build, returncode = CRASHES[kind]
    fault = build(phase)  # type: ignore[operator]
    if phase == "INIT":
        error, seconds = timed(lambda: mock_backend(2, faults=[fault], init_timeout=LONG))
    else:
        with mock_backend(2, faults=[fault], timeout=LONG) as sim:
            error, seconds = timed(sim.step if phase == "STEP" else sim.reset)
    assert isinstance(error, unisim.WorkerCrashed), error
    assert error.returncode == returncode
    assert str(-returncode) in str(error) or "SIG" in str(error) or "status 3" in str(error)
    record(kind, phase, error, seconds)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV])
def test_crash_while_idle(sig: signal.Signals, record: Record) -> None:
    with mock_backend(2, timeout=LONG) as sim:
        sim.step()
        os.kill(sim.worker_pid, sig)
        time.sleep(0.2)  # the worker dies between two calls
        error, seconds = timed(sim.step)
    assert isinstance(error, unisim.WorkerCrashed) and error.returncode == -sig
    record(sig.name, "idle", error, seconds)


@pytest.mark.parametrize(("kind", "body"), [
    ("SIGKILL", "kill -9 $$"),
    ("segfault", "exec python3 -c 'import ctypes; ctypes.string_at(0)'"),
    ("exit at once", "exit 4"),
])
def test_crash_during_the_handshake(kind: str, body: str, tmp_path: Path,
                                    record: Record) -> None:
    error, seconds = timed(lambda: unisim.Backend("mock", python=stand_in(tmp_path, body),
                                                  init_timeout=LONG))
    assert isinstance(error, unisim.SetupError), error
    assert isinstance(error.__cause__, unisim.WorkerCrashed)
    assert "did not speak the unisim protocol" in str(error)
    record(kind, "handshake", error, seconds)


# -- hangs and stops -------------------------------------------------------------------

@pytest.mark.parametrize("phase", ["INIT", "STEP", "RESET"])
@pytest.mark.parametrize("kind", ["hang", "SIGSTOP"])
def test_hang_in_a_command_times_out_at_the_deadline(kind: str, phase: str,
                                                     record: Record) -> None:
    fault = Fault.hang(phase) if kind == "hang" else Fault.kill(phase, sig=signal.SIGSTOP)
    deadline = SETUP_TIMEOUT if phase == "INIT" else STEP_TIMEOUT
    if phase == "INIT":
        error, seconds = timed(lambda: mock_backend(2, faults=[fault],
                                                    init_timeout=SETUP_TIMEOUT))
    else:
        with mock_backend(2, faults=[fault], timeout=STEP_TIMEOUT) as sim:
            error, seconds = timed(sim.step if phase == "STEP" else sim.reset)
            assert not Path(f"/proc/{sim.worker_pid}").exists()  # killed and reaped
    assert isinstance(error, unisim.WorkerTimeout), error
    assert f"within {deadline:g} s" in str(error), error
    record(kind, phase, error, seconds)


def test_stopped_while_idle_times_out_at_the_next_call(record: Record) -> None:
    with mock_backend(2, timeout=STEP_TIMEOUT) as sim:
        os.kill(sim.worker_pid, signal.SIGSTOP)
        error, seconds = timed(sim.step)
    assert isinstance(error, unisim.WorkerTimeout)
    assert f"within {STEP_TIMEOUT:g} s" in str(error), error
    record("SIGSTOP", "idle", error, seconds)


def test_hang_during_the_handshake(tmp_path: Path, record: Record) -> None:
    python = stand_in(tmp_path, "exec sleep 30")
    error, seconds = timed(lambda: unisim.Backend("mock", python=python,
                                                  init_timeout=SETUP_TIMEOUT))
    assert isinstance(error, unisim.SetupError)
    assert isinstance(error.__cause__, unisim.WorkerTimeout)
    assert f"within {SETUP_TIMEOUT:g} s" in str(error.__cause__), error.__cause__
    record("hang", "handshake", error, seconds)


# -- workers that are not ours ---------------------------------------------------------

def test_a_program_that_prints_junk_is_not_a_worker(tmp_path: Path, record: Record) -> None:
    python = stand_in(tmp_path, "echo oops >&2; sleep 0.2; echo 'Welcome to FooShell 1.0'; sleep 5")
    error, seconds = timed(lambda: unisim.Backend("mock", python=python, init_timeout=LONG))
    assert isinstance(error, unisim.SetupError)
    assert "did not speak the unisim protocol" in str(error)
    assert "Welcome to FooShell" in str(error) and "oops" in str(error)
    assert error.hint
    record("junk on stdout", "handshake", error, seconds)


def test_an_interpreter_without_the_engine_sdk_says_what_to_install(tmp_path: Path) -> None:
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "numpy", "msgpack"], check=True,
                   capture_output=True)
    with pytest.raises(unisim.SetupError, match="No module named 'mujoco'") as caught:
        unisim.Backend("mujoco", model="cartpole", python=python)
    assert caught.value.hint.endswith("or pass python= one that has it")
    assert f"{python} -m pip install mujoco" in caught.value.hint


def test_an_interpreter_running_something_else(tmp_path: Path) -> None:
    python = stand_in(tmp_path, "exec python3 -c 'print(\"hello, world\")'")
    with pytest.raises(unisim.SetupError, match=r"(?s)did not speak.*hello, world"):
        unisim.Backend("mock", python=python)


# -- corrupt streams, worker to host ---------------------------------------------------

def _header(version: int = 1, length: int = 0) -> bytes:
    return b"USIM" + version.to_bytes(2, "little") + b"\0\0" + length.to_bytes(4, "little")


@pytest.mark.parametrize(("name", "data", "message"), [
    ("wrong magic", b"XXXX" + bytes(8), "bad magic"),
    ("wrong version", _header(version=9), "protocol version 9"),
    ("oversize length", _header(length=2**31), "over the 67108864-byte limit"),
    ("unknown kind", _header(length=5) + b"\x94\x09\x01\x03\x80", "unknown message kind 9"),
    ("payload not a map", _header(length=5) + b"\x94\x03\x01\x03\x90", "payload must be a map"),
    ("undecodable body", _header(length=2) + b"\xc1\xc1", "undecodable"),
])
def test_corrupt_frame_from_the_worker(name: str, data: bytes, message: str,
                                       record: Record) -> None:
    with mock_backend(2, doorbell=False, faults=[Fault.garbage("STEP", data=data)],
                      timeout=LONG) as sim:
        error, seconds = timed(sim.step)
    assert isinstance(error, unisim.ProtocolError), error
    assert message in str(error)
    record(f"{name} (worker→host)", "STEP", error, seconds)


def test_truncated_frame_from_the_worker(record: Record) -> None:
    faults = [Fault.garbage("STEP", data=_header(length=100) + b"partial"),
              Fault.exit("STEP", code=0)]
    with mock_backend(2, doorbell=False, faults=faults, timeout=LONG) as sim:
        error, seconds = timed(sim.step)
    assert isinstance(error, unisim.ProtocolError)
    assert "stream ended inside a frame" in str(error)
    record("truncated frame (worker→host)", "STEP", error, seconds)


# -- corrupt streams, host to worker ---------------------------------------------------

@pytest.fixture
def raw_worker() -> Iterator[WorkerProcess]:
    """A worker process whose stdin the test writes to directly."""
    process = WorkerProcess(sys.executable)
    os.read(process.stdout_fd, 4096)  # its HELLO
    yield process
    process.kill()
    process.reap()
    process.close_pipes()


@pytest.mark.parametrize(("name", "data", "message"), [
    ("wrong magic", b"XXXX" + bytes(8), "bad magic"),
    ("wrong version", _header(version=2), "protocol version 2"),
    ("oversize length", _header(length=2**32 - 1), "over the 67108864-byte limit"),
    ("truncated frame", _header(length=50) + b"only a part", "stream ended inside a frame"),
])
def test_corrupt_stream_from_the_host_stops_the_worker(raw_worker: WorkerProcess, name: str,
                                                       data: bytes, message: str,
                                                       record: Record) -> None:
    start = time.monotonic()
    os.write(raw_worker.stdin_fd, data)
    os.close(raw_worker.stdin_fd)  # a truncated frame needs the end of the stream
    assert raw_worker.wait(LONG) == 2
    assert message in raw_worker.stderr_tail()
    record(f"{name} (host→worker)", "any", "worker exits with status 2, says why on stderr",
           time.monotonic() - start)


@pytest.mark.parametrize(("name", "body", "message"), [
    ("unknown command", b"\x94\x02\x01\x63\x80", "unknown command code 99"),
    ("payload not a map", b"\x94\x02\x01\x03\x91\x01", "payload must be a map"),
    ("a REPLY sent to the worker", b"\x94\x03\x01\x03\x80", "only REQUEST frames"),
    ("wrong payload type", b"\x94\x02\x01\x03\x81\xa8substeps\xa1x",
     "STEP substeps must be int, got 'x'"),
])
def test_bad_requests_get_an_error_reply_and_the_worker_lives_on(
        raw_worker: WorkerProcess, name: str, body: bytes, message: str,
        record: Record) -> None:
    import unisim_protocol as protocol

    os.write(raw_worker.stdin_fd, _header(length=len(body)) + body)
    kind, _, _, payload = protocol.unpack(protocol.FrameReader(raw_worker.stdout_fd).read())
    assert kind == protocol.Kind.ERROR and message in payload["message"]
    assert raw_worker.alive()
    record(f"{name} (host→worker)", "any",
           "ERROR reply naming it; the worker lives on", 0.0)


# -- the host dies, or is interrupted ------------------------------------------------

HOST = textwrap.dedent("""
    import sys, numpy as np
    from unisim.testing import Fault, mock_backend
    sim = mock_backend(2, doorbell={doorbell}, faults=[Fault.slow("STEP", call=2, seconds=0.5)])
    sim.step(np.ones((2, 2)))
    print(sim.worker_pid, flush=True)
    {body}
""")


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for whoever reaps orphans here)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _host(doorbell: bool, body: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", HOST.format(doorbell=doorbell, body=body)],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.parametrize("doorbell", [False, True])
def test_host_killed_mid_step_takes_the_worker_down(doorbell: bool, record: Record) -> None:
    host = _host(doorbell, "sim.step()")
    assert host.stdout is not None
    worker = int(host.stdout.readline())
    time.sleep(0.2)  # the host is now waiting for the slow step 2
    os.kill(host.pid, signal.SIGKILL)
    host.wait()
    start = time.monotonic()
    while _running(worker) and time.monotonic() - start < LONG:
        time.sleep(0.02)
    seconds = time.monotonic() - start
    assert not _running(worker)  # it noticed by itself: nobody else signals it
    assert not list(SHM_DIR.glob(f"{PREFIX}{host.pid}-*"))  # unlinked at attach
    record("host SIGKILL", f"STEP ({'doorbell' if doorbell else 'pipe'})",
           "the worker exits by itself; no segment left", seconds)


@pytest.mark.usefixtures("ctrl_c")  # the host inherits SIGINT's handling from here
def test_sigint_to_the_host_group_does_not_reach_the_worker() -> None:
    body = textwrap.dedent("""
        import os
        try:
            sim.step()
        except KeyboardInterrupt:
            os.kill(sim.worker_pid, 0)  # the worker is alive
            sim.step()                  # and the backend consistent: step 2, then 3
            print("qvel", sim.qvel[0, 0], flush=True)
        sim.close()
    """)
    host = _host(True, body)
    assert host.stdout is not None
    host.stdout.readline()
    time.sleep(0.2)
    os.killpg(host.pid, signal.SIGINT)  # what Ctrl-C in the host's terminal does
    out, _ = host.communicate(timeout=20)
    assert host.returncode == 0 and "qvel 0.03" in out


def test_segments_of_dead_owners_are_reaped_at_the_next_start() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = SHM_DIR / f"{PREFIX}{dead.pid}-leftover"
    orphan.write_bytes(b"x")
    assert orphan.name in reap_orphans()
    assert not orphan.exists()


# -- concurrency and use after close ---------------------------------------------------

def test_two_threads_stepping_one_backend_are_serialised() -> None:
    with mock_backend(3, nq=1, timestep=1.0) as sim:
        def run() -> None:
            for _ in range(200):
                sim.step(np.ones((3, 1)))
        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert np.array_equal(sim.qvel, np.full((3, 1), 400.0))  # no step lost or doubled


def test_tensors_read_after_close_do_not_crash() -> None:
    torch = pytest.importorskip("torch", reason="torch is in the dev extras; install .[dev]")
    sim = mock_backend(2, nq=1, timestep=1.0)
    tensors = sim.tensors()
    sim.step(np.ones((2, 1)))
    sim.close()
    assert torch.equal(tensors["qvel"], torch.ones(2, 1, dtype=torch.float64))
