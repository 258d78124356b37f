"""The SDK fake's envs keep resident only what they hold (issue 44, legged_gym's 4096 envs
within 4 GB): MuJoCo touches pages of each MjData that hold nothing (its arena, its solver
statistics), and a step with many contacts touches much of the arena; the fake's C kernel
gives those pages back (``_native``), its Python twin (no C compiler) does not. Run for
real on the fake's Python 3.8; the figures at legged_gym's scale are
``benchmarks/isaacgym_fake/memory.py``'s, in docs/isaacgym.md."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .test_isaacgym_fake import run_fake

ASSETS = Path(__file__).resolve().parents[1] / "examples" / "isaacgym_tasks" / "assets"
ENVS = 200

# The CI quadruped in each env, created inside a rough height field as legged_gym creates
# its robots (at the ground's height, until their first reset): the first steps make over
# a hundred contacts per env. Then each robot is reset above the ground, and falls. The
# process's resident memory is read before the envs, once they are built, and after the
# steps.
SCENE = """
    import numpy as np
    def resident():
        return int([line for line in open('/proc/self/status')
                    if line.startswith('VmRSS')][0].split()[1])
    np.random.seed(0)
    gym, sim = z_up_sim(0.005)
    random_heightfield(gym, sim, np.random.randint(0, 60, (80, 80)).astype(np.int16), 0.05)
    robot = quadruped(gym, sim, ASSETS)
    before = resident()
    for index in range(ENVS):
        env = gym.create_env(sim, gymapi.Vec3(0, 0, 0), gymapi.Vec3(0, 0, 0), 20)
        pose = gymapi.Transform()
        pose.p = gymapi.Vec3(1.0 + 0.1 * (index % 20), 1.0 + 0.1 * (index // 20), 0.1)
        gym.create_actor(env, robot, pose, "robot", index, 1)
    assert gym.prepare_sim(sim)
    built = resident()
    for _ in range(2):
        gym.simulate(sim)
    root = gymtorch.wrap_tensor(gym.acquire_actor_root_state_tensor(sim))
    gym.refresh_actor_root_state_tensor(sim)
    root[:, 2] += 1.0
    root[:, 7:13] = 0.0
    gym.set_actor_root_state_tensor(sim, gymtorch.unwrap_tensor(root))
    for _ in range(3):
        gym.simulate(sim)
    stepped = resident()
    from isaacgym import _native
    print(json.dumps({"native": _native.native() is not None,
                      "built": (built - before) / ENVS, "stepped": (stepped - before) / ENVS}))
""".replace("ASSETS", repr(str(ASSETS))).replace("ENVS", str(ENVS))


def test_the_c_kernel_gives_back_the_pages_an_env_does_not_hold(isaacgym_fake_python: str,
                                                                 tmp_path: Path) -> None:
    if shutil.which(os.environ.get("CC", "cc")) is None:
        pytest.skip("no C compiler here: the fake's C kernel is not built, so it gives no "
                    "pages back")
    native = run_fake(isaacgym_fake_python, SCENE)
    python = run_fake(isaacgym_fake_python, SCENE, CC="false",
                      UNISIM_CACHE_DIR=str(tmp_path))
    assert native["native"] and not python["native"]
    # KB per env: a new MjData's 160 KB of zeroed solver statistics, given back once built
    assert python["built"] - native["built"] > 120, (native, python)
    # and the arena of the steps with over a hundred contacts, given back once they end
    assert python["stepped"] - native["stepped"] > 300, (native, python)
