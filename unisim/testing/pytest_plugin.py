"""pytest fixtures of ``unisim.testing`` (registered through the ``pytest11`` entry point).

Nothing happens unless a test asks for a fixture:

* ``unisim_mock``: a factory, ``unisim_mock(num_envs=4, faults=[...], ...)``, taking
  ``mock_backend``'s arguments; every backend it made is closed after the test.
* ``unisim_leak_guard``: fails the test if it leaves a worker process or a unisim
  shared-memory segment behind (make it autouse in a conftest.py to guard a suite).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..backend import Backend
from ..errors import LeakError
from . import mock_backend
from .leaks import leak_guard


@pytest.fixture
def unisim_mock() -> Iterator[Callable[..., Backend]]:
    made: list[Backend] = []

    def make(*args: Any, **kwargs: Any) -> Backend:
        backend = mock_backend(*args, **kwargs)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.close()
    made.clear()


@pytest.fixture
def unisim_leak_guard() -> Iterator[None]:
    try:
        with leak_guard():
            yield
    except LeakError as exc:
        pytest.fail(str(exc))
