"""Calls the SDK accepts, which the SDK fake refused before issue 43 and now accepts with
the SDK's semantics (docs/isaacgym.md, "Raises removed by issue 43"), run for real on the
fake's Python 3.8."""

from __future__ import annotations

import pytest

from .test_isaacgym_fake_setters import run


def test_height_samples_are_cast_to_int16_as_the_sdks_binding_casts_them(
        isaacgym_fake_python: str) -> None:
    """``add_heightfield(sim, numpy.ndarray[int16], params)``: pybind11 casts another dtype;
    a cast that changes values is warned about; samples past nbRows * nbColumns are unused."""
    out, stderr = run(isaacgym_fake_python, """
        import numpy as np
        heights = {}
        for name, samples in (("int16", np.full(9, 100, dtype=np.int16)),
                              ("float_whole", np.full(12, 100.0)),  # 3 extra samples
                              ("float_lossy", np.full(9, 100.7))):
            gym, sim, envs, _ = build(BOX, num_envs=1, ground=False, height=0.8, dt=0.01)
            params = gymapi.HeightFieldParams()
            params.nbRows, params.nbColumns = 3, 3
            params.row_scale = params.column_scale = 1.0
            params.vertical_scale = 0.005
            params.transform.p = gymapi.Vec3(-1.0, -1.0, 0.0)
            gym.add_heightfield(sim, samples, params)
            assert gym.prepare_sim(sim)
            root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
            step(gym, sim, 150)
            gym.refresh_actor_root_state_tensor(sim)
            heights[name] = root[0, 2].item()
        print(json.dumps(heights))
    """)
    # the box rests on the field, 100 * 0.005 = 0.5 m up (no ground below), in every case
    assert 0.45 < out["int16"] < 0.7, out
    assert out["float_whole"] == pytest.approx(out["int16"], abs=1e-6)
    assert out["float_lossy"] == pytest.approx(out["int16"], abs=1e-6)  # 100.7 -> 100
    assert stderr.count("[isaacgym fake] Warning: add_heightfield: float64 height") == 1, stderr


def test_state_set_and_read_before_prepare_sim_is_the_scene_built_so_far(
        isaacgym_fake_python: str) -> None:
    out, stderr = run(isaacgym_fake_python, """
        gym, sim, envs, _ = build(BOX, num_envs=2, ground=False, height=2.0, dt=0.01)
        root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
        gym.refresh_actor_root_state_tensor(sim)
        before = root[:, 2].tolist()
        root[1, 2] = 3.0
        gym.set_actor_root_state_tensor(sim, gymtorch.unwrap_tensor(root))
        assert gym.prepare_sim(sim)
        print(json.dumps({"before": before, "after": root[:, 2].tolist()}))
    """)
    assert out == {"before": [2.0, 2.0], "after": [2.0, 3.0]}
    assert "Warning" not in stderr and "Error" not in stderr, stderr


def test_terrain_and_torch_utils_take_what_the_sdks_modules_take(
        isaacgym_fake_python: str) -> None:
    out, _ = run(isaacgym_fake_python, """
        from isaacgym import terrain_utils
        from isaacgym.torch_utils import get_axis_params
        terrain = terrain_utils.SubTerrain(width=8, length=8, vertical_scale=0.005,
                                           horizontal_scale=0.5)
        terrain_utils.random_uniform_terrain(terrain, -0.1, 0.1, step=0.05,
                                             downsampled_scale=0.25)  # finer than the grid
        print(json.dumps({"shape": list(terrain.height_field_raw.shape),
                          "within": bool(abs(terrain.height_field_raw).max() <= 20),
                          "axis": [float(v) for v in get_axis_params(1.0, -1)]}))
    """)
    assert out == {"shape": [8, 8], "within": True, "axis": [0.0, 0.0, 1.0]}
