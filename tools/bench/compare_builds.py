#!/usr/bin/env python
"""Two builds of ember side by side: the benchmark run in each environment, alternately.

    python tools/bench/compare_builds.py OLD_PYTHON NEW_PYTHON [--rounds 3] [-- run.py options]

Each environment (a Python with ember and torch installed) runs tools/bench/run.py on the
same workloads, the two taking turns ``--rounds`` times, so that the drift of a shared
machine falls on both. Every run measures ember against torch in its own process; the table
gives, per workload, the median over the rounds of each build's ratio ember/torch (torch is
the yardstick both runs share) and the new build's ratio over the old one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _run(python: str, extra: list, out: Path) -> dict:
    cmd = [python, str(HERE / "run.py"), "--no-markdown", "--no-profile", "--json", str(out),
           *extra]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    data = json.loads(out.read_text())
    ratios = {}
    for row in data["results"]:
        r = row.get("ratio")
        if r is not None:
            ratios[row["name"]] = r
    return ratios


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    runs: dict = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            order = ("old", "new") if i % 2 == 0 else ("new", "old")
            for which in order:
                python = args.old if which == "old" else args.new
                runs[which].append(_run(python, extra, Path(tmp) / f"{which}{i}.json"))
                print(f"round {i + 1}/{args.rounds}: {which} done", file=sys.stderr)
    names = [n for n in runs["old"][0] if all(n in r for r in runs["old"] + runs["new"])]
    print(f"{'workload':24} {'old ember/torch':>16} {'new ember/torch':>16} {'new/old':>8}"
          f"   (medians of {args.rounds} alternating runs; per-run values)")
    for n in names:
        old = [r[n] for r in runs["old"]]
        new = [r[n] for r in runs["new"]]
        mo, mn = statistics.median(old), statistics.median(new)
        print(f"{n:24} {mo:16.3f} {mn:16.3f} {mn / mo:8.2f}   "
              f"old {', '.join(f'{v:.2f}' for v in old)}; new {', '.join(f'{v:.2f}' for v in new)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
