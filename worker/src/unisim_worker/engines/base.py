"""The interfaces between the worker loop and an engine adapter: ``Engine`` simulates,
``Renderer`` only draws.

An engine owns ``num_envs`` simulations of one scene. The host learns the engine's
slots from ``init``'s reply, creates them in shared memory (each with a leading
``num_envs`` axis) and hands them to ``attach``; from then on every array that scales
with the number of environments moves through those slots, never through replies.
"""

from typing import Tuple  # noqa: F401 - the type comment below


class EngineFault(RuntimeError):
    """An error after which the engine's state is no longer trustworthy."""

    faulted = True


class Engine:
    """Base class documenting the calls the worker makes, in order."""

    # True if ``attach`` accepts slots in a CUDA arena (``cuda_ipc.DeviceRegion``s). The
    # worker reads it after ``init``, so an engine may set it there (IsaacGym: GPU pipeline).
    device_resident = False
    # What ``randomize`` can apply (engines/physics.py); INIT refuses anything else by name.
    physics_quantities = ()  # type: Tuple[str, ...]

    def init(self, spec, worker):
        """Build the scene from the INIT payload; return the layout.

        ``worker.progress(done, total, text)`` keeps the host's deadline alive during
        long setups; call it per item if that is natural (its frames are throttled). The
        layout is built by ``unisim_protocol.schemas`` (``physics_layout`` with its
        ``slot``s); the host always adds ``reset_mask`` (uint8, per env).
        """
        raise NotImplementedError

    def attach(self, slots):
        """Receive ``{name: (num_envs, ...) ndarray}`` views; publish the initial state."""
        raise NotImplementedError

    def step(self, substeps):
        """Read controls from the slots, advance ``substeps`` physics steps, publish state.

        ``substeps`` is a positive int, checked by the worker loop, which looks this up once,
        after ``attach``: an engine may bind it there to a function over its slots (the
        MuJoCo engine's stepper), so that a STEP calls no method of its own."""
        raise NotImplementedError

    def reset(self, use_qpos, use_qvel):
        """Reset envs flagged in ``reset_mask``; take qpos/qvel from the slots if flagged."""
        raise NotImplementedError

    def randomize(self, parameters, push, resetting=False):
        """For envs flagged in ``reset_mask``: apply their ``physics`` slot rows to the
        model (``parameters``) and add their ``push`` rows to the root velocity (``push``),
        publishing the new state. Only called when INIT had a ``physics`` spec.
        ``resetting``: a reset of those envs follows, so their state need not be kept."""
        raise NotImplementedError("this engine cannot randomise physics")

    def capture(self, request):
        """Render into the image slot; return metadata. Engines without cameras refuse."""
        raise NotImplementedError("this engine cannot render")

    def close(self):
        """Release engine resources; called once when the worker exits."""


class Renderer:
    """Base class of an engine that only draws (a render pool's worker): no simulation.

    ``init`` returns a render layout (``schemas.render_layout``), ``attach`` receives the
    pool's arena (state and image slots), ``render`` serves RENDER."""

    device_resident = False  # its slots are in host shared memory
    physics_quantities = ()  # it randomises nothing

    def init(self, spec, worker):
        raise NotImplementedError

    def attach(self, slots):
        raise NotImplementedError

    def render(self, request):
        """Draw rows of a state slot into the same rows of the image slots."""
        raise NotImplementedError

    def close(self):
        """Release engine resources; called once when the worker exits."""
