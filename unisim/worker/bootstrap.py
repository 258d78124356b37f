"""Start a unisim worker on any interpreter (Python 3.8+).

Run by the host as ``python <worker dir>/bootstrap.py <protocol dir>``. The worker's
interpreter cannot see the host's site-packages (it may be another Python), so this
loads the shared core and the worker from their directories under the names they have
on the host, ``unisim.protocol`` and ``unisim.worker``: every file has one module name
in every process. ``unisim`` itself is an empty namespace here; no host code is loaded.
"""

import importlib.util
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def load_package(name, directory):
    """Import the package in ``directory`` as ``name``."""
    init = os.path.join(directory, "__init__.py")
    spec = importlib.util.spec_from_file_location(name, init,
                                                  submodule_search_locations=[directory])
    if spec is None or spec.loader is None:
        raise ImportError("cannot load %s from %r" % (name, directory))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def install(protocol_dir, worker_dir=HERE):
    """Make ``unisim.protocol`` and ``unisim.worker`` importable in this interpreter (also
    used by tools that run worker code in-process on another interpreter)."""
    root = types.ModuleType("unisim")
    root.__path__ = []
    sys.modules["unisim"] = root
    root.protocol = load_package("unisim.protocol", protocol_dir)
    root.worker = load_package("unisim.worker", worker_dir)


def main():
    if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
        del sys.path[0]  # the worker's modules are importable by their package names only
    install(sys.argv[1])
    from unisim.worker.main import main as serve

    return serve()


if __name__ == "__main__":
    sys.exit(main())
