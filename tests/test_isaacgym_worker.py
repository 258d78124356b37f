"""The IsaacGym engine inside a real Python 3.8 worker that has no IsaacGym.

Everything before the SDK import runs for real (options, MJCF scan, bounds, keyframes);
the SDK import itself must fail cleanly, naming isaacgym, and leave the worker serving.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from unisim import models
from unisim.channel import Channel
from unisim.errors import RemoteError
from unisim.process import WorkerProcess
from unisim.protocol import Command

PY38 = os.environ.get("UNISIM_PY38") or ""
pytestmark = pytest.mark.skipif(not PY38, reason="UNISIM_PY38 is not set (make test sets it)")


@pytest.fixture
def channel() -> Iterator[Channel]:
    process = WorkerProcess(PY38)
    channel = Channel(process)
    try:
        yield channel
    finally:
        channel.request(Command.SHUTDOWN, {}, 10)
        process.close_pipes()
        process.reap(grace=5)
        channel.close()


def init(channel: Channel, options: dict[str, Any], keyframe: str | None = None,
         model: str = "quadruped") -> RemoteError:
    payload = {"engine": "isaacgym", "num_envs": 4, "model": str(models.path(model)),
               "keyframe": keyframe, "options": options}
    with pytest.raises(RemoteError) as error:
        channel.request(Command.INIT, payload, 60)
    return error.value


def test_the_worker_offers_isaacgym_without_importing_it(channel: Channel) -> None:
    hello = channel.hello(30)
    assert "isaacgym" in hello["engines"]
    assert hello["python"].startswith("3.8.")


def test_init_checks_the_model_then_fails_cleanly_on_the_missing_sdk(channel: Channel) -> None:
    channel.hello(30)
    error = init(channel, {"pipeline": "cpu"}, keyframe="stand")
    assert error.exc_type == "ModuleNotFoundError" and "isaacgym" in error.remote_message
    assert "isaacgym_sim.py" in error.remote_traceback  # got as far as the SDK import
    assert channel.request(Command.PING, {}, 10) == {}  # and the worker still serves


@pytest.mark.parametrize(("options", "keyframe", "message"), [
    ({"pipline": "gpu"}, None, "unknown isaacgym option(s) pipline"),
    ({"pipeline": "cpu", "viewer": True}, None, "need the GPU pipeline"),
    ({}, "run", "has no keyframe 'run'"),
    ({"variants": ["/nonexistent.xml"]}, None, "does not exist"),
    ({"variants": [str(models.path("cartpole"))]}, None, "changes the layout (joints)"),
    ({"variants": [str(models.path("quadruped"))], "assignment": [0, 1, 2, 0]}, None,
     "refers to variants [2]; there are 2"),
])
def test_bad_requests_are_refused_before_the_sdk_is_touched(
        channel: Channel, options: dict[str, Any], keyframe: str | None, message: str) -> None:
    channel.hello(30)
    error = init(channel, options, keyframe)
    assert message in error.remote_message
    assert "isaacgym_sim" not in error.remote_traceback
