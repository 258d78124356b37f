"""The IsaacGym engine inside a real Python 3.8 worker that has no IsaacGym.

Everything before the SDK import runs for real (options, MJCF scan, bounds, keyframes);
the SDK import itself must fail cleanly, naming isaacgym, and leave the worker serving.
"""

from __future__ import annotations

from typing import Any

import pytest

from unisim import models
from unisim.channel import Channel
from unisim.errors import RemoteError
from unisim_protocol import Command


def init(py38_channel: Channel, options: dict[str, Any], keyframe: str | None = None,
         model: str = "quadruped", **extra: Any) -> RemoteError:
    payload = {"engine": "isaacgym", "num_envs": 4, "model": str(models.path(model)),
               "keyframe": keyframe, "options": options, **extra}
    with pytest.raises(RemoteError) as error:
        py38_channel.request(Command.INIT, payload, 60)
    return error.value


def test_the_worker_offers_isaacgym_without_importing_it(py38_channel: Channel) -> None:
    hello = py38_channel.hello(30)
    assert "isaacgym" in hello["engines"]
    assert hello["python"].startswith("3.8.")


def test_init_checks_the_model_then_fails_cleanly_on_the_missing_sdk(py38_channel: Channel) -> None:
    py38_channel.hello(30)
    error = init(py38_channel, {"pipeline": "cpu"}, keyframe="stand")
    assert error.exc_type == "ModuleNotFoundError" and "isaacgym" in error.remote_message
    assert "isaacgym/sim.py" in error.remote_traceback  # got as far as the SDK import
    assert py38_channel.request(Command.PING, {}, 10) == {}  # and the worker still serves


@pytest.mark.parametrize(("options", "keyframe", "message"), [
    ({"pipline": "gpu"}, None, "unknown isaacgym option(s) pipline"),
    ({"camera": {"envs": [4]}}, None, "camera envs must be env indices in [0, 4)"),
    ({}, "run", "has no keyframe 'run'"),
    ({"variants": ["/nonexistent.xml"]}, None, "does not exist"),
    ({"variants": [str(models.path("cartpole"))]}, None, "changes the layout (joints)"),
    ({"variants": [str(models.path("quadruped"))], "assignment": [0, 1, 2, 0]}, None,
     "refers to variants [2]; there are 2"),
])
def test_bad_requests_are_refused_before_the_sdk_is_touched(
        py38_channel: Channel, options: dict[str, Any], keyframe: str | None, message: str) -> None:
    py38_channel.hello(30)
    error = init(py38_channel, options, keyframe)
    assert message in error.remote_message
    assert "isaacgym/sim" not in error.remote_traceback


CUDA_PLANE = {"data_plane": "cuda", "device": {"ordinal": 0, "uuid": bytes(16)}}


def test_the_cuda_plane_on_the_cpu_pipeline_is_refused_before_the_sdk(
        py38_channel: Channel) -> None:
    py38_channel.hello(30)
    error = init(py38_channel, {"pipeline": "cpu"}, **CUDA_PLANE)
    assert "data_plane='cuda'" in error.remote_message
    assert "pipeline='cpu'" in error.remote_message
    assert "isaacgym/sim" not in error.remote_traceback


def test_the_cuda_plane_looks_for_the_arenas_gpu_before_the_sdk(py38_channel: Channel) -> None:
    """No GPU here has the all-zero UUID: the driver is missing, or it names what it sees."""
    py38_channel.hello(30)
    error = init(py38_channel, {}, **CUDA_PLANE)
    assert error.exc_type in ("CudaUnavailable", "CudaError"), error.remote_message
    assert "libcuda" in error.remote_message or "no GPU visible" in error.remote_message
    assert "isaacgym/sim" not in error.remote_traceback
    assert py38_channel.request(Command.PING, {}, 10) == {}
