"""A rank that never joins, raises or dies: the other ranks fail with a clear error within
the timeout instead of hanging (workers/failures.py on 2 ranks)."""

from __future__ import annotations

import re

from _launch import run_ranks


def _caught(out: str) -> tuple[float, str]:
    m = re.search(r"CAUGHT after ([\d.]+) s: (.*)", out)
    assert m, out
    return float(m.group(1)), m.group(2)


def test_rank_that_stops_taking_part_times_out():
    code, out, _ = run_ranks("failures.py", 2, "stall", timeout=90)
    assert code == 3, out
    m = re.search(r"MONITORED after ([\d.]+) s: (.*)", out)
    assert m and float(m.group(1)) < 15, out
    assert "Rank 1 failed to pass monitoredBarrier in 2000 ms" in m.group(2)
    waited, msg = _caught(out)
    assert 2.5 < waited < 15, waited          # the group's timeout is 3 s
    assert "all_reduce" in msg and "timed out" in msg and "0:00:03" in msg, msg
    # the group is broken after a timeout: the next operation raises at once
    assert re.search(r"BROKEN .*no more operations", out), out


def test_rank_that_raises_fails_the_others_fast():
    code, out, seconds = run_ranks("failures.py", 2, "raise", timeout=90)
    assert code != 0
    assert "ValueError: boom on rank 1" in out      # the failing rank's own traceback
    waited, msg = _caught(out)
    assert waited < 10, waited                      # long before the 60 s timeout
    assert "rank 1 failed" in msg and "boom on rank 1" in msg, msg


def test_rank_that_dies_ends_the_job():
    code, out, seconds = run_ranks("failures.py", 2, "die", timeout=90)
    assert code != 0, out
    assert "CAUGHT" not in out
    assert seconds < 50, seconds                    # mpiexec ends rank 0: no 60 s wait
