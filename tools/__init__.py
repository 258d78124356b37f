"""The project's tools (not shipped): figures, reliability, type checks, the GPU run."""
