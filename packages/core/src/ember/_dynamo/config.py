"""Settings of ``ember.compile`` (PyTorch's ``torch._dynamo.config``), read at each call.

- ``recompile_limit`` (8, PyTorch's default): how many guard sets one compiled function
  compiles; later new inputs run eagerly, with a warning.
- ``debug``: print to stderr what is compiled, the guards, the fused kernels (with the
  paths of their C source and library) and why a call runs eagerly. Starts as the
  environment variable ``EMBER_COMPILE_DEBUG`` (``1`` turns it on).
"""

from __future__ import annotations

import os

recompile_limit = 8
debug = os.environ.get("EMBER_COMPILE_DEBUG", "") not in ("", "0", "false", "False")
