"""Helpers run by path on another interpreter (Python 3.8's MuJoCo, EnvPool's venv).

That interpreter sees neither unisim's host package nor this one, so these files import
each other by bare name and run as scripts; the host imports ``benchmarks.py38.runner``
for the loops it also times in-process.
"""
