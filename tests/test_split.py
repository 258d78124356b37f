"""The split of envs among workers: chosen from the engine's capabilities, overridable."""

from __future__ import annotations

import pytest

import unisim
from unisim import split
from unisim_worker.engines import capabilities

THREADED = {"engine": "MuJoCo 4.0.0", "threaded": True}
SINGLE = {"engine": "MuJoCo 3.2.3", "threaded": False}


def test_an_engine_with_threads_of_its_own_gets_one_worker_with_every_core() -> None:
    chosen = split.choose(THREADED, 4096, cpus=16)
    assert (chosen.workers, chosen.threads) == (1, 16)
    assert "threads of its own" in chosen.reason
    assert (split.choose(THREADED, 4096, threads=8, cpus=16).workers,
            split.choose(THREADED, 4, threads=1, cpus=16).workers) == (2, 4)


def test_a_single_threaded_engine_gets_one_worker_per_core_with_enough_envs_each() -> None:
    assert split.choose(SINGLE, 4096, cpus=16) == split.Split(
        16, 1, "MuJoCo 3.2.3 steps on one thread: one worker per core, at least "
               f"{split.MIN_ROWS_PER_WORKER} envs each")
    assert split.choose(SINGLE, 3 * split.MIN_ROWS_PER_WORKER, cpus=16).workers == 3
    assert split.choose(SINGLE, 3 * split.MIN_ROWS_PER_WORKER - 1, cpus=16).workers == 2
    assert split.choose(SINGLE, 1, cpus=16).workers == 1


def test_workers_and_threads_override_the_choice() -> None:
    assert split.choose(THREADED, 4096, workers=4, cpus=16) == split.Split(
        4, 4, "workers=4 asked for")
    assert (split.choose(SINGLE, 4096, workers=2, threads=3, cpus=16).threads,
            split.choose(SINGLE, 4096, workers=2, cpus=16).threads) == (3, 1)


def test_state_on_one_gpu_means_one_worker() -> None:
    assert split.choose(SINGLE, 4096, one_device=True, cpus=16).workers == 1
    gpu = capabilities("isaacgym", {}, 4096)  # the SDK's default pipeline
    cpu = capabilities("isaacgym", {"pipeline": "cpu"}, 4096)
    assert split.choose(gpu, 4096, cpus=16).workers == 1
    assert split.choose(cpu, 4096, cpus=16).workers == 16


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_a_bad_workers_or_threads_is_refused_before_any_worker_starts(bad: object) -> None:
    for name in ("workers", "threads"):
        with pytest.raises(ValueError, match=f"{name} must be a positive int or None"):
            unisim.Backend("mock", num_envs=2, **{name: bad})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"workers must lie in \[1, num_envs=2\], got 3"):
        unisim.Backend("mock", num_envs=2, workers=3)


def test_the_host_worker_reports_its_mujoco_and_the_split_is_visible() -> None:
    import mujoco

    with unisim.Backend("mujoco", model="cartpole", num_envs=300, progress=False) as sim:
        caps = sim.worker_info["capabilities"]
        assert caps["version"] == mujoco.__version__
        threaded = _has_batch()
        assert caps["threaded"] is threaded
        assert sim.split is not None
        expected = 1 if threaded else split.choose(caps, 300).workers
        assert len(sim.worker_pids) == sim.split.workers == expected
        sim.step()


def test_the_38_worker_is_single_threaded_and_gets_one_worker_per_core(py38: str) -> None:
    num_envs = 2 * split.MIN_ROWS_PER_WORKER
    with unisim.Backend("mujoco", model="cartpole", num_envs=num_envs, python=py38,
                        progress=False) as sim:
        caps = sim.worker_info["capabilities"]
        assert caps["version"].startswith("3.2.") and caps["threaded"] is False
        assert sim.split == split.choose(caps, num_envs)
        assert len(set(sim.worker_pids)) == sim.split.workers == min(2, split.cores())
        sim.step()
        sim.restart()  # the same split again, chosen once
        assert len(set(sim.worker_pids)) == sim.split.workers
        sim.step()


def _has_batch() -> bool:
    try:
        import mujoco.batch  # noqa: F401
    except ImportError:
        return False
    return True


def test_a_viewer_makes_one_sim_on_either_pipeline() -> None:
    """The CPU pipeline's default is a sim per core, but a viewer is one window: one sim."""
    cpu = {"pipeline": "cpu"}
    assert not capabilities("isaacgym", cpu, 4096)["per_device"]
    caps = capabilities("isaacgym", {**cpu, "viewer": True}, 4096)
    assert caps["per_device"]
    assert split.choose(caps, 4096, cpus=16).workers == 1


def test_describe_reads_the_options_as_the_engine_does() -> None:
    """DESCRIBE is answered by the engine's own reading of its options: a typo is refused
    there, before any INIT, with the list of what is accepted."""
    with pytest.raises(ValueError, match=r"unknown isaacgym option.*pipline"):
        capabilities("isaacgym", {"pipline": "cpu"}, 8)
    with pytest.raises(ValueError, match="unknown engine 'physx'; this worker has mujoco"):
        capabilities("physx", {}, 8)
