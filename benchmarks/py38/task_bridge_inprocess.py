"""A bridged task's in-process reference: the same task, built the same way, stepped here.

Run on the worker's interpreter (Python 3.8 with the SDK or its fake):

    python task_bridge_inprocess.py rollout OPTIONS.json NUM_ENVS ACTIONS.npy OUT.npz
    python task_bridge_inprocess.py serve OPTIONS.json NUM_ENVS

``OPTIONS.json`` holds the task engine's INIT options (``BridgedTask`` builds them). The task
is built by the worker's own ``engines.task.build``, so both sides start from the same
state and seed. ``rollout`` steps it with the given actions (steps, num_envs, num_actions)
and saves each step's observations, rewards, resets and time-outs; ``serve`` prints
``{"ready": true}`` once built, then answers each line ``{"steps": K}`` on stdin with one
JSON line, the seconds each of K steps of random actions took
(``benchmarks/throughput/task_bridge.py``).
"""

import json
import os
import sys
import time

import numpy as np

from runner import install_packages

WORKER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "worker", "src", "unisim_worker")


def build(options_path, num_envs):
    install_packages(WORKER)
    from unisim_worker.engines.task import build as task_build

    with open(options_path) as handle:
        options = json.load(handle)
    device = options.get("sim_device", "cpu")
    task, style = task_build.build(options, num_envs, device)
    style.first(task)
    return task, style


def rollout(options_path, num_envs, actions_path, out_path):
    task, style = build(options_path, num_envs)
    import torch  # after the SDK, which the build imported

    observations, rewards, resets, time_outs = [], [], [], []
    for actions in np.load(actions_path):
        obs, _, rew, done, extras = style.outputs(task.step(torch.from_numpy(actions)))
        observations.append(obs.cpu().numpy().copy())
        rewards.append(rew.cpu().numpy().astype(np.float32))
        resets.append(done.cpu().numpy().astype(bool))
        time_outs.append(extras["time_outs"].cpu().numpy().astype(bool))
    np.savez(out_path, obs=np.array(observations), rew=np.array(rewards),
             done=np.array(resets), time_outs=np.array(time_outs))


def serve(options_path, num_envs):
    task, _ = build(options_path, num_envs)
    import torch  # after the SDK, which the build imported

    generator = torch.Generator().manual_seed(0)
    shape = (num_envs, task.num_actions)
    cuda = str(task.device).startswith("cuda")
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        seconds = []
        for _ in range(json.loads(line)["steps"]):
            actions = (torch.rand(shape, generator=generator) * 2.0 - 1.0).to(task.device)
            started = time.perf_counter()
            task.step(actions)
            if cuda:
                torch.cuda.synchronize()
            seconds.append(time.perf_counter() - started)
        print(json.dumps({"seconds": seconds}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "rollout":
        rollout(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    else:
        serve(sys.argv[2], int(sys.argv[3]))
