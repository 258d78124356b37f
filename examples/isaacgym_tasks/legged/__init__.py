"""The CI quadruped in legged_gym's style, and a task registry like legged_gym's.

``task_registry.get_task_class("ci_quadruped")`` and ``get_cfgs("ci_quadruped")`` are what
the task bridge calls for ``registry="isaacgym_tasks.legged:task_registry"``. Python 3.8.
"""

from .config import QuadrupedFlatCfg
from .legged_robot import LeggedRobot


class TaskRegistry:
    def __init__(self):
        self.task_classes = {}
        self.env_cfgs = {}
        self.train_cfgs = {}

    def register(self, name, task_class, env_cfg, train_cfg):
        self.task_classes[name] = task_class
        self.env_cfgs[name] = env_cfg
        self.train_cfgs[name] = train_cfg

    def get_task_class(self, name):
        return self.task_classes[name]

    def get_cfgs(self, name):
        return self.env_cfgs[name], self.train_cfgs[name]


task_registry = TaskRegistry()
task_registry.register("ci_quadruped", LeggedRobot, QuadrupedFlatCfg(), None)
