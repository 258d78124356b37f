"""The payload schemas: what a builder makes its parser accepts; a missing or mistyped
field is an error naming it, on the host a ``ProtocolError``."""

from __future__ import annotations

import numpy as np
import pytest

import unisim
import unisim_protocol
from unisim.layout import Layout
from unisim_protocol import codec, schemas


def physics() -> dict[str, object]:
    return schemas.physics_layout(
        engine="mock", engine_version="1", stepper="numpy", num_envs=4, nq=3, nv=2, nu=2,
        nbody=1, timestep=0.01, joint_names=["a", "b"], actuator_names=["a", "b"],
        body_names=["world"], keyframes=[], ctrl_range=[(-1, 1), (-2, 2)],
        slots=[schemas.slot("ctrl", "<f8", [2]), schemas.slot("qpos", "<f8", [3]),
               schemas.slot("qvel", "<f8", [2])])


def test_a_built_layout_crosses_the_wire_and_parses_on_the_host() -> None:
    layout = Layout.from_reply(codec.decode(codec.encode(physics())))
    assert (layout.nq, layout.nv, layout.nu) == (3, 2, 2)
    assert layout.ctrl_range == ((-1.0, 1.0), (-2.0, 2.0))
    assert [s.name for s in layout.slots] == ["ctrl", "qpos", "qvel", "reset_mask"]


@pytest.mark.parametrize("field", ["nq", "slots", "ctrl_range"])
def test_a_layout_without_a_field_is_a_protocol_error_naming_it(field: str) -> None:
    reply = physics()
    del reply[field]
    with pytest.raises(unisim.ProtocolError, match=f"lacks {field}"):
        Layout.from_reply(reply)


def test_a_mistyped_field_is_named() -> None:
    reply = {**physics(), "nq": "3"}
    with pytest.raises(schemas.SchemaError, match="field nq has the wrong type"):
        schemas.parse_physics_layout(reply)


def test_render_layout_and_requests_round_trip() -> None:
    layout = schemas.render_layout(engine_version="3", nq=2, nmocap=0, cameras=["top"],
                                   qpos0=np.zeros(2), mocap_pos0=np.zeros((0, 3)),
                                   mocap_quat0=np.zeros((0, 4)),
                                   slots=[schemas.slot("qpos", "<f8", [2])])
    assert schemas.parse_render_layout(codec.decode(codec.encode(layout)))["cameras"] == ["top"]
    request = schemas.render_request(rows=(2, 5), width=8, height=6, camera=None, depth=True,
                                     randomize=False, call=0, source=None)
    assert schemas.parse_render_request(codec.decode(codec.encode(request)))["rows"] == [2, 5]
    with pytest.raises(schemas.SchemaError, match="rows must be"):
        schemas.parse_render_request({**request, "rows": [1]})
    capture = schemas.capture_request(env_id=1, camera="top", width=4, height=3, image={})
    assert schemas.parse_capture_request(capture)["env_id"] == 1
    with pytest.raises(schemas.SchemaError, match="CAPTURE lacks image"):
        schemas.parse_capture_request({"env_id": 1, "width": 4, "height": 3})
    assert schemas.parse_attach_request(schemas.attach_request(
        {"name": "x", "size": 64, "slots": []})) == ({"name": "x", "size": 64, "slots": []},
                                                      None)


def test_a_request_is_built_from_its_listed_fields_only() -> None:
    assert schemas.request("STEP") == {"substeps": 1}
    assert schemas.request("RESET", qpos=True) == {"qpos": True, "qvel": False, "physics": False}
    with pytest.raises(schemas.SchemaError, match="STEP has no field substep; its fields: "
                                                  "substeps"):
        schemas.request("STEP", substep=2)


@pytest.mark.parametrize(("name", "payload", "message"), [
    ("STEP", {"substeps": True}, "STEP substeps must be int, got True"),
    ("STEP", {"substeps": "2"}, "STEP substeps must be int, got '2'"),
    ("DESCRIBE", {"options": {}}, "DESCRIBE lacks engine"),
    ("INIT", {"engine": "mujoco", "num_envs": 2, "keyframe": 3},
     "INIT keyframe must be str or nil, got 3"),
])
def test_a_read_checks_each_field_and_names_the_bad_one(name: str, payload: dict[str, object],
                                                       message: str) -> None:
    with pytest.raises(schemas.SchemaError, match=message):
        schemas.read(name, payload)


def test_a_read_fills_defaults_with_fresh_maps_and_ignores_unknown_fields() -> None:
    first = schemas.read("INIT", {"engine": "mock", "num_envs": 2, "later": 1})
    assert "later" not in first and first["options"] == {} and first["first_env"] == 0
    first["options"]["x"] = 1
    assert schemas.read("INIT", {"engine": "mock", "num_envs": 2})["options"] == {}


def test_the_worker_reads_a_request_through_the_schema() -> None:
    """A request the host's builder would refuse, sent raw, is refused by the worker by name,
    and the worker stays usable."""
    with unisim.Backend("mock", num_envs=2, doorbell=False) as sim:
        with pytest.raises(unisim.RemoteError, match="RESET qpos must be bool, got 1"):
            sim._pool.call(unisim_protocol.Command.RESET, {"qpos": 1}, sim.timeout)
        sim.step()
