"""The raw pipe floor's far end: echo whatever arrives on stdin back on stdout.

Run by ``latency.py`` on the worker's interpreter (Python 3.8+, stdlib only), so the floor
costs the same two process wake-ups as a unisim round trip and nothing else.
"""

import os

while True:
    chunk = os.read(0, 4096)
    if not chunk:
        break
    os.write(1, chunk)
