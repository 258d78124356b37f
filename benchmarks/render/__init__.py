"""Frames per second of the render pool against a single-process renderer."""
