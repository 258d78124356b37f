"""Print a public project's tasks as JSON, read from the project itself.

    python3.8 registered.py registry <checkout> <module:attribute>   # a legged_gym TaskRegistry
    python3.8 registered.py isaacgymenvs <checkout>                  # isaacgym_task_map

Run on the worker's interpreter with the SDK (or its fake): importing a project's task
list imports its tasks. A registry gives its registered names (sorted); IsaacGymEnvs gives
``{name: ["isaacgymenvs.tasks:<class or resolver>", config]}`` in its map's order, the
config being the ``cfg/task`` file its ``train.py`` takes as ``task=<config>`` for it: the
file of the task's own name, else the first (by name) whose ``name:`` is the task's
(AllegroKukaTwoArms is ``AllegroKukaTwoArmsLSTM``), else None. Python 3.8 code.
"""

import glob
import importlib
import json
import os
import sys


def main():
    kind, checkout = sys.argv[1], sys.argv[2]
    sys.path.insert(0, checkout)
    import isaacgym  # noqa: F401 - the SDK before torch, as the projects import it

    if kind == "registry":
        module, attribute = sys.argv[3].split(":")
        registry = getattr(importlib.import_module(module), attribute)
        print(json.dumps(sorted(registry.task_classes)))
    else:
        import yaml
        from isaacgymenvs.tasks import isaacgym_task_map

        folder = os.path.join(checkout, "isaacgymenvs", "cfg", "task")
        named = {}
        for path in sorted(glob.glob(os.path.join(folder, "*.yaml"))):
            with open(path) as handle:
                content = yaml.safe_load(handle) or {}
            stem = os.path.splitext(os.path.basename(path))[0]
            named.setdefault(content.get("name"), stem)
        print(json.dumps({
            name: ["isaacgymenvs.tasks:" + task.__name__,
                   name if os.path.isfile(os.path.join(folder, name + ".yaml"))
                   else named.get(name)]
            for name, task in isaacgym_task_map.items()}))


if __name__ == "__main__":
    main()
