"""Start a unisim worker on any interpreter (Python 3.8+).

Run by the host as ``python <worker dir>/bootstrap.py <protocol dir>``. The worker's
interpreter cannot see the host's site-packages (it may be another Python, and those
packages may not run there), so this loads the two packages a worker needs from their
folders, under their own names ``unisim_protocol`` and ``unisim_worker``, and nothing
else of the host's.
"""

import importlib.util
import os
import sys

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
    """Make ``unisim_protocol`` and ``unisim_worker`` importable in this interpreter (also
    used by tools that run worker code in-process on another interpreter)."""
    load_package("unisim_protocol", protocol_dir)
    load_package("unisim_worker", worker_dir)


def main():
    if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
        del sys.path[0]  # the worker's modules are importable by their package names only
    install(sys.argv[1])
    from unisim_worker.main import main as serve

    return serve()


if __name__ == "__main__":
    sys.exit(main())
