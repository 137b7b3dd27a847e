"""Every collective against NumPy on 2 and 4 ranks (workers/collectives.py), and the object
collectives with a refused malicious pickle."""

from __future__ import annotations

import re

import pytest
from _launch import run_ranks


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_against_numpy(n):
    code, out, _ = run_ranks("collectives.py", n, timeout=240)
    assert code == 0, out
    counts = re.findall(r"CHECKED (\d+) rank (\d+)", out)
    assert sorted(int(r) for _, r in counts) == list(range(n)), out
    # several hundred comparisons on each rank (a few are rank-specific: dst, src)
    assert all(int(c) > 250 for c, _ in counts), counts
