"""The render pool's engine: ``engine.ENGINE`` draws rows of states, simulates nothing."""
