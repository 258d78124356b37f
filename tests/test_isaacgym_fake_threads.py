"""The SDK fake steps its envs on threads (``UNISIM_FAKE_THREADS``), run for real on its
Python 3.8: a seeded scene ends bit for bit the same on one thread and on several."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .test_isaacgym_fake import run_fake

ASSETS = Path(__file__).resolve().parents[1] / "examples" / "isaacgym_tasks" / "assets"

# The CI quadruped (8 DOFs; effort drives in even envs, position drives in odd ones) and a
# box (held to low maximum speeds) in each of 7 envs on a random height field, stepped 40
# times with seeded random torques and targets, then every state buffer printed (float32
# values: exact in JSON).
SCENE = """
    import numpy as np
    np.random.seed(0)
    gym, sim = z_up_sim(0.005, substeps=2, depenetration=1.0)
    samples = np.random.randint(0, 40, (60, 60)).astype(np.int16)
    random_heightfield(gym, sim, samples, 0.1, corner=(-1.0, -1.0))
    robot = quadruped(gym, sim, ASSETS)
    options = gymapi.AssetOptions()  # slow enough to be dragged as they fall and tumble
    options.max_linear_velocity, options.max_angular_velocity = 0.5, 2.0
    box = gym.create_box(sim, 0.1, 0.1, 0.1, options)
    for index in range(7):
        env = gym.create_env(sim, gymapi.Vec3(0, 0, 0), gymapi.Vec3(0, 0, 0), 3)
        pose = gymapi.Transform()
        pose.p = gymapi.Vec3(0.5 * (index % 3), 0.5 * (index // 3), 0.3 + 0.02 * index)
        actor = gym.create_actor(env, robot, pose, "robot", index, 1)
        if index % 2:
            props = gym.get_actor_dof_properties(env, actor)
            props["driveMode"][:] = gymapi.DOF_MODE_POS
            props["stiffness"][:], props["damping"][:] = 20.0, 0.5
            gym.set_actor_dof_properties(env, actor, props)
        pose.p = gymapi.Vec3(0.5 * (index % 3) + 0.2, 0.5 * (index // 3), 0.5)
        gym.create_actor(env, box, pose, "box", index, 0)
        gym.enable_actor_dof_force_sensors(env, actor)
    assert gym.prepare_sim(sim)
    names = ("actor_root_state", "dof_state", "rigid_body_state", "net_contact_force",
             "dof_force")
    buffers = {n: gymtorch.wrap_tensor(getattr(gym, "acquire_%s_tensor" % n)(sim))
               for n in names}
    generator = torch.Generator().manual_seed(0)
    count = buffers["dof_state"].shape[0]
    for _ in range(40):
        torques = torch.rand(count, generator=generator) * 20.0 - 10.0
        targets = torch.rand(count, generator=generator) - 0.5
        gym.set_dof_actuation_force_tensor(sim, gymtorch.unwrap_tensor(torques))
        gym.set_dof_position_target_tensor(sim, gymtorch.unwrap_tensor(targets))
        gym.simulate(sim)
        gym.fetch_results(sim, True)
    for n in names:
        getattr(gym, "refresh_%s_tensor" % n)(sim)
    print(json.dumps({n: b.tolist() for n, b in buffers.items()}))
""".replace("ASSETS", repr(str(ASSETS)))


def test_a_seeded_scene_is_bitwise_equal_on_one_thread_and_on_several(
        isaacgym_fake_python: str) -> None:
    one = run_fake(isaacgym_fake_python, SCENE, UNISIM_FAKE_THREADS="1")
    several = run_fake(isaacgym_fake_python, SCENE, UNISIM_FAKE_THREADS="3")
    assert one.keys() == several.keys()
    for name in one:
        assert one[name] == several[name], name  # exact: float32 values round-trip in JSON
    heights = [row[2] for row in one["actor_root_state"]]
    assert all(0.0 < z < 1.0 for z in heights)  # the scene stayed on its terrain
    assert any(any(abs(f) > 0.0 for f in row) for row in one["net_contact_force"])


def test_the_c_kernel_steps_as_its_python_twin_does(isaacgym_fake_python: str,
                                                      tmp_path: Path) -> None:
    # without a C compiler (CC=false, and no kernel compiled earlier in this cache folder) the
    # Python twin steps: the results are the same, bit for bit
    if shutil.which(os.environ.get("CC", "cc")) is None:
        pytest.skip("no C compiler here: the fake's C kernel is not built, its Python twin runs")
    native = run_fake(isaacgym_fake_python, SCENE + "    from isaacgym import _native\n"
                      "    assert _native.native() is not None\n", UNISIM_FAKE_THREADS="3")
    python = run_fake(isaacgym_fake_python, SCENE + "    from isaacgym import _native\n"
                      "    assert _native.native() is None\n", UNISIM_FAKE_THREADS="3",
                      CC="false", UNISIM_CACHE_DIR=str(tmp_path))
    for name in native:
        assert native[name] == python[name], name


@pytest.mark.parametrize("value", ["0", "-2", "all"])
def test_a_bad_thread_count_is_refused_by_name(isaacgym_fake_python: str, value: str) -> None:
    out = run_fake(isaacgym_fake_python, """
        gym, sim, envs, _ = build(BOX, num_envs=2)
        assert gym.prepare_sim(sim)
        try:
            gym.simulate(sim)
            print(json.dumps("stepped"))
        except RuntimeError as error:
            print(json.dumps(str(error)))
    """, UNISIM_FAKE_THREADS=value)
    assert "UNISIM_FAKE_THREADS" in out and "positive whole number" in out
