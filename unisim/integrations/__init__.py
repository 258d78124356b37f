"""Adapters from a ``unisim.tasks.Task`` to the trainers' own env interfaces.

Each lives in its own module and imports its trainer's package only when imported:
``unisim.integrations.rsl_rl`` (rsl-rl-lib 5.x) and ``unisim.integrations.gymnasium``.
"""
