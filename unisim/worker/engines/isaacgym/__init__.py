"""The IsaacGym engine: ``engine.ENGINE`` adapts the SDK (imported lazily, in ``sim``)."""
