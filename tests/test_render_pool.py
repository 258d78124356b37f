"""The render pool against in-process ``mujoco.Renderer``, with real rendering on CPU."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")  # before mujoco is imported, here or in a worker

import numpy as np
import pytest

import unisim
import unisim_protocol
from unisim import Randomizer, RenderPool

from . import render_reference

SCENE = str(Path(__file__).parent / "models" / "scene.xml")
W, H = 64, 48
NQ = 8  # the scene's free box (7) and hinge (1)


def _states(n: int, seed: int = 0) -> np.ndarray:
    """``n`` distinct poses of the scene: the box moved and turned, the arm swung."""
    rng = np.random.default_rng(seed)
    qpos = np.zeros((n, NQ))
    qpos[:, 0:2] = rng.uniform(-0.5, 0.5, (n, 2))
    qpos[:, 2] = rng.uniform(0.15, 0.6, n)
    angle = rng.uniform(0, np.pi, n)
    qpos[:, 3], qpos[:, 6] = np.cos(angle / 2), np.sin(angle / 2)
    qpos[:, 7] = rng.uniform(-1.5, 1.5, n)
    return qpos


@pytest.fixture(scope="module")
def pool() -> Iterator[RenderPool]:
    """Three CPU workers; batches of 7 split 2/3/2 between them."""
    with RenderPool(SCENE, n_workers_per_device=3, max_batch_size=8,
                    max_image_size=160 * 120) as pool:
        yield pool


@pytest.mark.parametrize("camera", ["front", "top", None])
def test_pixels_and_depth_equal_in_process_renderer(pool: RenderPool, camera: str | None) -> None:
    states = _states(7)
    rgb, depth = pool.render(W, H, states, camera=camera, depth=True)
    ref_rgb, ref_depth = render_reference.render(SCENE, states, camera, W, H, depth=True)
    assert rgb.shape == (7, H, W, 3) and rgb.dtype == np.uint8
    assert depth.shape == (7, H, W) and depth.dtype == np.float32
    assert np.array_equal(rgb, ref_rgb)
    assert np.array_equal(depth, ref_depth)
    assert depth.min() > 0.5 and depth.max() < 100.0  # metres, not the raw z-buffer


def test_each_row_lands_in_its_place(pool: RenderPool) -> None:
    states = _states(7, seed=1)
    forward = pool.render(W, H, states, camera="front")
    backward = pool.render(W, H, states[::-1], camera="front")
    assert len({image.tobytes() for image in forward}) == 7  # seven distinct images
    assert np.array_equal(forward, backward[::-1])  # rows of every worker where they belong
    single = pool.render(W, H, states[4:5], camera="front")  # one worker, one row
    assert np.array_equal(single[0], forward[4])


def test_without_states_the_state_rows_as_they_stand(pool: RenderPool) -> None:
    states = _states(3, seed=2)
    pool.render(W, H, states)
    again = pool.render(W, H, camera="front")
    assert again.shape == (8, H, W, 3)
    assert np.array_equal(again[:3], pool.render(W, H, states, camera="front"))


def test_mocap_states_move_mocap_bodies(pool: RenderPool) -> None:
    states = _states(2, seed=3)
    mocap = np.array([[[-0.6, 0.3, 0.2]], [[0.2, -0.4, 0.5]]])
    rgb = pool.render(W, H, {"qpos": states, "mocap_pos": mocap}, camera="front")
    reference, _ = render_reference.render(SCENE, states, "front", W, H, mocap_pos=mocap)
    assert np.array_equal(rgb, reference)
    nominal = pool.render(W, H, states, camera="front")
    assert np.array_equal(nominal[0], rgb[0]) and not np.array_equal(nominal[1], rgb[1])


def test_copy_false_gives_views_of_the_shared_images(pool: RenderPool) -> None:
    first = pool.render(W, H, _states(2, seed=4), copy=False)
    kept = first.copy()
    second = pool.render(W, H, _states(2, seed=5), copy=False)
    assert np.shares_memory(first, second) and np.array_equal(first, second)
    assert not np.array_equal(kept, second) and second.flags.c_contiguous


def test_render_from_reads_a_backends_state_slots_in_place(pool: RenderPool) -> None:
    with unisim.Backend("mujoco", model=SCENE, num_envs=5, progress=False) as sim:
        sim.reset(qpos=_states(5, seed=6))
        rgb = pool.render_from(sim, W, H, camera="front")
        assert np.array_equal(rgb, render_reference.render(SCENE, sim.qpos, "front", W, H)[0])
        sim.step(substeps=30)  # falling boxes: the next render sees the new qpos
        moved, depth = pool.render_from(sim, W, H, camera="front", depth=True)
        ref_rgb, ref_depth = render_reference.render(SCENE, sim.qpos, "front", W, H, depth=True)
        assert np.array_equal(moved, ref_rgb) and np.array_equal(depth, ref_depth)
        assert not np.array_equal(rgb, moved)
    with unisim.Backend("mujoco", model="cartpole", num_envs=1, progress=False) as other, \
            pytest.raises(ValueError, match="needs the same model"):
        pool.render_from(other, W, H)
    with unisim.Backend("mujoco", model=SCENE, num_envs=9, progress=False) as big, \
            pytest.raises(ValueError, match="batch of 9 states is larger than this pool's "
                                            "max_batch_size of 8"):
        pool.render_from(big, W, H)


def test_a_render_worker_refuses_physics_commands_by_name(pool: RenderPool) -> None:
    """The render engine has an interface of its own: STEP is refused as data, not as a
    missing method, and the pool stays usable."""
    with pytest.raises(unisim.RemoteError, match="RenderEngine is not a physics engine"):
        pool._pool.call(unisim_protocol.Command.STEP, {}, 10.0)
    assert pool.render(8, 8).shape == (pool.max_batch_size, 8, 8, 3)


def test_errors_are_clear_and_leave_the_pool_usable(pool: RenderPool) -> None:
    states = _states(2)
    with pytest.raises(ValueError, match="160x121 image has 19360 pixels, over this pool's "
                                         "max_image_size of 19200"):
        pool.render(160, 121, states)
    with pytest.raises(ValueError, match="batch of 9 states is larger than this pool's "
                                         "max_batch_size of 8"):
        pool.render(W, H, _states(9))
    with pytest.raises(ValueError, match="no camera 'side'; its cameras: front, top"):
        pool.render(W, H, states, camera="side")
    with pytest.raises(ValueError, match=r"camera must be a camera name, an id in \[-1, 2\)"):
        pool.render(W, H, states, camera=2)
    with pytest.raises(ValueError, match=r"qpos states must be an \(N, 8\) array"):
        pool.render(W, H, states[:, :7])
    with pytest.raises(ValueError, match=r"mocap_pos states must be \(2, 1, 3\)"):
        pool.render(W, H, {"qpos": states, "mocap_pos": np.zeros((3, 1, 3))})
    with pytest.raises(ValueError, match="got keys \\['qpos', 'qvel'\\]"):
        pool.render(W, H, {"qpos": states, "qvel": states})
    with pytest.raises(ValueError, match="randomize=True needs a pool made with randomizer="):
        pool.render(W, H, states, randomize=True)
    with pytest.raises(ValueError, match="image width must be an int"):
        pool.render(0, H, states)
    assert pool.render(W, H, states).shape == (2, H, W, 3)


def test_constructor_errors() -> None:
    with pytest.raises(ValueError, match="device_ids must be None, a device count or"):
        RenderPool(SCENE, device_ids=[-1])
    with pytest.raises(ValueError, match="device count, at least 1"):
        RenderPool(SCENE, device_ids=0)
    with pytest.raises(ValueError, match="n_workers_per_device must be a positive int"):
        RenderPool(SCENE, n_workers_per_device=0)
    with pytest.raises(ValueError, match=r"max_batch_size must be an int >= the number of "
                                         r"workers \(3\), got 2"):
        RenderPool(SCENE, n_workers_per_device=3, max_batch_size=2)
    with pytest.raises(ValueError, match="max_image_size must be a positive int"):
        RenderPool(SCENE, max_image_size=0)
    with pytest.raises(TypeError, match=r"randomizer must be a unisim\.Randomizer"):
        RenderPool(SCENE, randomizer={"seed": 1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rgb must be a range"):
        Randomizer(rgb=(0.5, 0.2))
    with pytest.raises(FileNotFoundError, match="neither an MJCF file"):
        RenderPool("no-such-model.xml")


def test_a_missing_egl_device_is_a_setup_error_naming_the_worker() -> None:
    with pytest.raises(unisim.SetupError, match=r"a render worker failed to start: .*"
                                                r"MUJOCO_EGL_DEVICE_ID .* got 99"):
        RenderPool(SCENE, device_ids=[99])


def test_dead_worker_is_named_and_the_pool_restarts() -> None:
    states = _states(4, seed=7)
    with RenderPool(SCENE, n_workers_per_device=2, max_batch_size=4) as pool:
        reference = pool.render(W, H, states, camera="front")
        victim = pool.worker_pids[1]
        os.kill(victim, signal.SIGKILL)
        with pytest.raises(unisim.RenderWorkerDied,
                           match=rf"render worker 1 \(CPU, pid {victim}\) of 2 failed: .*"
                                 "killed by SIGKILL") as failure:
            pool.render(W, H, states, camera="front")
        assert failure.value.worker == 1 and failure.value.device is None
        with pytest.raises(unisim.BackendDead,
                           match=rf"lost render worker 1 \(CPU, pid {victim}\); call restart"):
            pool.render(W, H, states)
        pool.restart()
        assert victim not in pool.worker_pids
        assert np.array_equal(pool.render(W, H, states, camera="front"), reference)
    with pytest.raises(unisim.BackendDead, match="closed"):
        pool.render(W, H, states)


def _randomized(seed: int, workers: int, calls: int = 1, **ranges: object) -> list[np.ndarray]:
    """rgb and depth of ``calls`` randomised renders of the same states."""
    states = _states(4, seed=8)
    with RenderPool(SCENE, n_workers_per_device=workers, max_batch_size=4,
                    randomizer=Randomizer(seed=seed, **ranges)) as pool:  # type: ignore[arg-type]
        out = []
        for _ in range(calls):
            out.extend(pool.render(W, H, states, camera="front", depth=True, randomize=True))
        out.extend(pool.render(W, H, states, camera="front", depth=True))  # nominal again
        return out


def test_randomisation_is_reproducible_and_restored() -> None:
    rgb, depth, nominal_rgb, nominal_depth = _randomized(seed=1, workers=2)
    states = _states(4, seed=8)
    ref_rgb, ref_depth = render_reference.render(SCENE, states, "front", W, H, depth=True)
    assert np.array_equal(nominal_rgb, ref_rgb) and np.array_equal(nominal_depth, ref_depth)
    assert not np.array_equal(rgb, ref_rgb)
    assert len({image.tobytes() for image in rgb}) == 4  # every row its own draw
    same = _randomized(seed=1, workers=1)  # another pool, another split of the rows
    assert np.array_equal(same[0], rgb) and np.array_equal(same[1], depth)
    other = _randomized(seed=2, workers=2)
    assert not np.array_equal(other[0], rgb)


def test_randomisation_changes_what_it_should() -> None:
    still = {"rgb": (0.5, 0.5), "texture_rgb": (0.5, 0.5), "light_pos": 0.0,
             "diffuse": (0.7, 0.7), "ambient": (0.0, 0.0), "specular": (0.3, 0.3),
             "camera_pos": 0.0, "camera_angle": 0.0}
    states = _states(4, seed=8)
    ref_rgb, ref_depth = render_reference.render(SCENE, states, "front", W, H, depth=True)
    for part in ({"rgb": (0.0, 1.0)}, {"texture_rgb": (0.0, 1.0)},
                 {"light_pos": 0.5, "diffuse": (0.3, 1.0)}):
        rgb, depth, *_ = _randomized(seed=3, workers=1, **{**still, **part})
        assert not np.array_equal(rgb, ref_rgb), part  # the look changes ...
        assert np.array_equal(depth, ref_depth), part  # ... the geometry seen does not
    rgb, depth, *_ = _randomized(seed=3, workers=1, **{**still, "camera_angle": 5.0})
    assert not np.array_equal(depth, ref_depth)  # a moved camera sees other distances
    first, second, *_ = _randomized(seed=3, workers=1, calls=2)[::2]
    assert not np.array_equal(first, second)  # each randomised call draws anew


def test_python38_workers_equal_the_renderer_of_their_interpreter(
        py38: str, tmp_path: Path) -> None:
    states = _states(5, seed=9)
    with RenderPool(SCENE, n_workers_per_device=2, max_batch_size=5, python=py38) as pool:
        assert pool.engine_version.startswith("3.2")
        rgb, depth = pool.render(W, H, states, camera="front", depth=True)
    np.save(tmp_path / "qpos.npy", states)
    out = tmp_path / "reference.npz"
    subprocess.run([py38, render_reference.__file__, SCENE, str(tmp_path / "qpos.npy"),
                    "front", str(W), str(H), str(out)], check=True,
                   env={**os.environ, "MUJOCO_GL": "egl"})
    reference = np.load(out)
    assert np.array_equal(rgb, reference["rgb"]) and np.array_equal(depth, reference["depth"])
