"""What the SDK fake costs at the field's scale: memory per env, and how its step scales over
threads."""
