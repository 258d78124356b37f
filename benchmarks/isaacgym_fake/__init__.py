<<<<<<< HEAD
"""What the SDK fake costs at the field's scale: memory per env."""
=======
"""The IsaacGym SDK fake itself: how its step scales over threads."""
>>>>>>> main
