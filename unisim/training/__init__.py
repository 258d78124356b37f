"""``python -m unisim train``: rsl_rl PPO on a unisim task, written into a run folder.

Needs the ``train`` extra (torch, rsl-rl-lib, matplotlib, imageio); imported only by the
``train`` command.
"""
