"""ember's benchmark harness: every workload runs under ember and under PyTorch in one process.

Modules:

- ``registry``: the ``Workload`` and ``Target`` records, the ``@workload`` decorator and the
  availability check (a workload whose feature has not landed is listed, not dropped).
- ``workloads``: the workloads, each written once against the common PyTorch API.
- ``timing``: interleaved timing (warm-up, calibrated blocks, medians and spread) and the
  measurements made in fresh subprocesses (import time, peak RSS).
- ``report``: the machine description, the printed table, the JSON file and docs/benchmarks.md.

The entry point is tools/bench/run.py (``nox -s bench`` or ``python tools/bench/run.py``).
"""
