"""The IsaacGym SDK fake itself: how its step scales over threads."""
