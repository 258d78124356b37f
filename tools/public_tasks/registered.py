"""Print a public project's tasks as JSON, read from the project itself.

    python3.8 registered.py registry <checkout> <module:attribute>   # a legged_gym TaskRegistry
    python3.8 registered.py isaacgymenvs <checkout>                  # isaacgym_task_map

Run on the worker's interpreter with the SDK (or its fake): importing a project's task
list imports its tasks. A registry gives its registered names (sorted); IsaacGymEnvs gives
``{name: "isaacgymenvs.tasks:<class or resolver>"}`` in its map's order. Python 3.8 code.
"""

import importlib
import json
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
        from isaacgymenvs.tasks import isaacgym_task_map

        print(json.dumps({name: "isaacgymenvs.tasks:" + task.__name__
                          for name, task in isaacgym_task_map.items()}))


if __name__ == "__main__":
    main()
