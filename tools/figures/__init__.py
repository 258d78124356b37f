"""Figures of the docs and the check that each block equals its result file."""
