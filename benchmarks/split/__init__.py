"""How envs are split: workers x threads, rows per worker, the pool's chunk plan."""
