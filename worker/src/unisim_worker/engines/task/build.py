"""The user's task, built on the worker's interpreter from INIT's ``options``.

``task``: the class as ``"package.module:Class"`` (or, with ``registry``, a name registered
in a legged_gym ``TaskRegistry`` given as ``"module:attribute"``); ``style``: how it is
built and what its ``step`` returns (``STYLES``); ``cfg``: an IsaacGymEnvs config map, or a
legged_gym config class as ``"module:Class"``; ``overrides``: ``{"env.num_envs": 64, ...}``
set on a legged_gym config; ``paths``: folders put first on ``sys.path`` for the user's
code; ``sim_device``: ``"cpu"`` or ``"cuda:N"``; ``seed``. Python 3.8.
"""

import importlib
import random
import sys

import numpy as np


def _load(path, what):
    """The object named ``"module:attribute"`` (attribute may be dotted)."""
    if not isinstance(path, str) or path.count(":") != 1:
        raise ValueError("%s must be 'package.module:Name', got %r" % (what, path))
    module_name, attribute = path.split(":")
    module = importlib.import_module(module_name)
    found = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise ValueError("%s %r: module %s has no %s" % (what, path, module_name, attribute))
        found = getattr(found, part)
    return found


def _class_to_dict(obj):
    """A legged_gym config object (nested classes) as a plain dict."""
    if not hasattr(obj, "__dict__"):
        return obj
    result = {}
    for key in dir(obj):
        if key.startswith("_"):
            continue
        value = getattr(obj, key)
        result[key] = [_class_to_dict(v) for v in value] if isinstance(value, list) \
            else _class_to_dict(value)
    return result


class VecTaskStyle:
    """IsaacGymEnvs: ``Class(cfg, rl_device, sim_device, graphics_device_id, headless, ...)``
    with a config map; ``step`` returns ``({"obs", "states"}, rew, reset, extras)``."""

    name = "vec_task"
    episode_length = "progress_buf"
    observation_buffers = ("obs_buf", "states_buf")

    def create(self, options, num_envs, device):
        cls = _load(options["task"], "task")
        cfg = options.get("cfg")
        if not isinstance(cfg, dict) or not isinstance(cfg.get("env"), dict) \
                or not isinstance(cfg.get("sim"), dict):
            raise ValueError("style 'vec_task' needs cfg: the task's config map with 'env' and "
                             "'sim' sections (IsaacGymEnvs' cfg['task']), got %r" % (cfg,))
        cfg = dict(cfg, env=dict(cfg["env"], numEnvs=num_envs),
                   sim=dict(cfg["sim"], use_gpu_pipeline=device != "cpu"))
        return cls(cfg, device, device, 0, True, False, False)

    def first(self, task):
        return self.outputs((task.reset(), task.rew_buf, task.reset_buf, task.extras))

    def outputs(self, result):
        observations, rewards, resets, extras = result
        return observations["obs"], observations.get("states"), rewards, resets, extras

    def privileged_count(self, task):
        return int(getattr(task, "num_states", 0) or 0)


class LeggedGymStyle:
    """legged_gym: ``Class(cfg, sim_params, physics_engine, sim_device, headless)`` with a
    config object; ``step`` returns ``(obs, privileged_obs, rew, reset, extras)``."""

    name = "legged_gym"
    episode_length = "episode_length_buf"
    observation_buffers = ("obs_buf", "privileged_obs_buf")

    def _config(self, options):
        registry = options.get("registry")
        if registry is not None:
            found = _load(registry, "registry")
            cls = found.get_task_class(options["task"])
            cfg, _ = found.get_cfgs(options["task"])
            return cls, cfg
        if not options.get("cfg"):
            raise ValueError("style 'legged_gym' needs cfg: the config class as "
                             "'package.module:Class' (or registry= and a registered task name)")
        return _load(options["task"], "task"), _load(options["cfg"], "cfg")()

    def create(self, options, num_envs, device):
        from isaacgym import gymapi, gymutil

        cls, cfg = self._config(options)
        cfg.env.num_envs = num_envs
        for dotted, value in (options.get("overrides") or {}).items():
            *parents, leaf = dotted.split(".")
            target = cfg
            for part in parents:
                target = getattr(target, part)
            if not hasattr(target, leaf):
                raise ValueError("override %r: the config has no %s" % (dotted, dotted))
            setattr(target, leaf, value)
        params = gymapi.SimParams()
        params.use_gpu_pipeline = device != "cpu"
        params.physx.use_gpu = device != "cpu"
        gymutil.parse_sim_config(_class_to_dict(cfg.sim), params)
        return cls(cfg=cfg, sim_params=params, physics_engine=gymapi.SIM_PHYSX,
                   sim_device=device, headless=True)

    def first(self, task):
        observations, privileged = task.reset()
        return observations, privileged, task.rew_buf, task.reset_buf, task.extras

    def outputs(self, result):
        return result

    def privileged_count(self, task):
        return int(getattr(task, "num_privileged_obs", None) or 0)


STYLES = {style.name: style for style in (VecTaskStyle(), LeggedGymStyle())}


def build(options, num_envs, device):
    """``(task, style)``: the user's task built for ``num_envs`` envs on ``device``."""
    if not isinstance(options, dict) or not options.get("task"):
        raise ValueError("the task engine needs options={'task': 'package.module:Class', "
                         "'style': 'vec_task' | 'legged_gym', 'cfg': ...}")
    style = STYLES.get(options.get("style"))
    if style is None:
        raise ValueError("option style must be one of %s, got %r"
                         % (", ".join(sorted(STYLES)), options.get("style")))
    paths = options.get("paths") or []
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ValueError("option paths must be a list of folders, got %r" % (paths,))
    for path in reversed(paths):
        if path not in sys.path:
            sys.path.insert(0, path)
    import isaacgym  # noqa: F401 - the SDK before torch, which the user's module imports

    seed = int(options.get("seed", 0))
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return style.create(options, num_envs, device), style
