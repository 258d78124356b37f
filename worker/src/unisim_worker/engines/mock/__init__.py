"""The scripted mock engine of the tests: ``engine.ENGINE`` misbehaves on request."""


def capabilities(options, num_envs):
    return {"engine": "the mock engine", "threaded": False}
