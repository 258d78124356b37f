"""A behavioural fake of NVIDIA IsaacGym Preview 4 (``gymapi``, ``gymtorch``) on MuJoCo.

Part of unisim's test kit: ``unisim.testing.isaacgym_fake_python(python)`` gives an
interpreter on which ``import isaacgym`` is this package. Its contract and every
assumption it makes are in docs/isaacgym.md ("Assumptions of the SDK fake").
"""

import sys

# The SDK refuses to load after torch (isaacgym/gymdeps.py); so does the fake, so that
# code which imports them in the wrong order fails here as it would there.
if "torch" in sys.modules:
    raise ImportError("PyTorch was imported before isaacgym modules.  Please import torch "
                      "after isaacgym modules.")

FAKE = True  # the real SDK has no such attribute: tests tell the two apart by it
