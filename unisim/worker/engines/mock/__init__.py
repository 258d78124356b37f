"""The scripted mock engine of the tests: ``engine.ENGINE`` misbehaves on request."""
