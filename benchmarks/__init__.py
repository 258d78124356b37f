"""unisim's benchmarks, grouped by what they measure (docs/benchmarks.md).

Each benchmark is a module run from the repository root, ``python -m benchmarks.GROUP.NAME``,
and prints its figures side by side in one run; none asserts a speed.

    throughput/     steps/s through unisim against in-process: the suite, the task bridge
    latency/        what one step costs: round trips, profiles, checks, CPU while waiting
    split/          how envs are split over workers, threads and chunks
    gpu/            the CUDA IPC data plane (MJX) against MJX in-process; the GPU's hand-over
                    between two processes
    render/         the render pool against a single-process renderer
    randomization/  physics randomisation at reset, mid-episode and pushes

Shared: ``measure`` (interleaved repetitions, paired ratios), ``systems`` (every compared
system behind one interface), ``gym_env`` (the gymnasium baseline's env). ``py38/`` holds
helpers run by path on another interpreter (Python 3.8, EnvPool's venv), which sees none of
this package: they import each other by bare name. Modules here import each other
absolutely (``from benchmarks.measure import paired_ratio``) and publish figures through
``tools.figures.doc_figures``.
"""
