"""Each engine refuses, by name and before touching its SDK, what it cannot randomise;
tasks train under randomisation."""

from __future__ import annotations

import numpy as np
import pytest

from unisim import PhysicsRandomization, Uniform, models
from unisim.channel import Channel
from unisim.errors import RemoteError
from unisim.physics_randomization import friction, gravity, mass, stiffness
from unisim_protocol import Command


@pytest.fixture
def channel(py38_channel: Channel) -> Channel:
    py38_channel.hello(30)
    return py38_channel


@pytest.mark.parametrize(("engine", "parameters", "message"), [
    ("isaacgym", (gravity(Uniform(-1, 1)),),
     "the isaacgym engine cannot randomise gravity per env"),
    ("isaacgym", (stiffness(Uniform(0, 1), joints=["fl_hip"], operation="set"),
                  gravity(Uniform(-1, 1))),
     "cannot randomise gravity, stiffness per env .*remove them"),
    ("mjx", (friction(Uniform(0.5, 1), bodies=["torso"]),),
     r"the mjx engine cannot randomise friction per env \(it can: nothing\)"),
])
def test_engines_refuse_what_they_cannot_randomise_by_name(
        channel: Channel, engine: str, parameters: tuple, message: str) -> None:
    spec = PhysicsRandomization(parameters=parameters)
    payload = {"engine": engine, "num_envs": 4, "model": str(models.path("quadruped")),
               "keyframe": None, "options": {}, "physics": spec.to_wire()}
    with pytest.raises(RemoteError, match=message) as error:
        channel.request(Command.INIT, payload, 60)
    assert error.value.exc_type == "ValueError"  # refused before any SDK import
    assert channel.request(Command.PING, {}, 10) == {}


def test_quadruped_task_randomises_at_its_resets() -> None:
    pytest.importorskip("torch")
    import unisim

    with unisim.make("quadruped", 8, seed=5, randomize=True) as task:
        first = task.sim.physics_parameters()
        assert set(first) == {"friction", "added_mass"}
        assert ((first["friction"] >= 0.3) & (first["friction"] <= 1.25)).all()
        task.reset(np.array([2, 6]))
        second = task.sim.physics_parameters()
        changed = ~np.isclose(first["added_mass"], second["added_mass"])
        assert changed.tolist() == [False, False, True, False, False, False, True, False]
    with unisim.make("quadruped", 8, seed=5, randomize=True) as again:
        np.testing.assert_array_equal(again.sim.physics_parameters()["friction"],
                                      first["friction"])
    with pytest.raises(ValueError, match="Cartpole has no default physics randomization"):
        unisim.make("cartpole", 2, randomize=True)
    spec = PhysicsRandomization(parameters=(mass(Uniform(1, 2), bodies=["pole"]),))
    with unisim.make("cartpole", 2, randomize=spec) as cartpole:
        assert cartpole.sim.physics_parameters()["mass:pole"].shape == (2,)
