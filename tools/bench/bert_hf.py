#!/usr/bin/env python
"""BERT encoder forward: embertext.models.BertModel against Hugging Face `transformers` on torch.

A BERT-base configuration (12 layers, hidden 768, 12 heads, intermediate 3072, vocabulary
30522) with random weights is built by transformers, saved with ``save_pretrained`` and
loaded into embertext's ``BertModel``; both must give the same hidden states and pooled
output (the largest difference is printed). Then the eval forward under ``no_grad`` is timed
at several (batch, sequence) shapes, with each library's default thread count and with one
thread, the two libraries interleaved block by block (timing.interleaved) and the figure
the median over the samples. The rows of a batch have different lengths (an attention
mask with padding), as a batch of real sentences has.

Issue 19's target: batch 8, sequence 128 within 1.2x of torch + transformers on the CPU.
The other shapes are there so that a cliff at one shape is not hidden by another.

Usage::

    python tools/bench/bert_hf.py                                 # BERT-base, ~5 minutes
    python tools/bench/bert_hf.py --shapes 8x128 --threads 1 --repeats 9
    python tools/bench/bert_hf.py --layers 2 --hidden 64 --heads 2 --intermediate 128 \\
        --vocab 500 --shapes 2x16 --repeats 3                      # a tiny model: seconds

Needs ``transformers`` (5.x) and ``safetensors``; prints the load average (``os.getloadavg``)
before and after every row, since the machines are shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parent
# Run as a script, tools/bench is first on sys.path: import the harness as the package `bench`.
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path[0] = str(TOOLS)
elif str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

from bench import timing  # noqa: E402

TARGET = ((8, 128), 1.2)  # issue 19: (batch, seq) and the ratio ember/torch it must meet


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="8x128,8x32,1x128",
                        help="BATCHxSEQ,... (default: 8x128,8x32,1x128)")
    parser.add_argument("--threads", default="default,1",
                        help="thread settings to run, 'default' (each library's own) and/or "
                             "counts (default: default,1)")
    parser.add_argument("--repeats", type=int, default=7, help="samples per library and row")
    parser.add_argument("--block-s", type=float, default=0.5,
                        help="seconds of calls per sample (at least one call)")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--intermediate", type=int, default=3072)
    parser.add_argument("--vocab", type=int, default=30522)
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results")
    return parser.parse_args(argv)


def parse_shapes(text: str) -> list[tuple[int, int]]:
    shapes = []
    for item in text.split(","):
        batch, _, seq = item.strip().partition("x")
        if not (batch.isdigit() and seq.isdigit()) or int(batch) < 1 or int(seq) < 1:
            raise ValueError(f"--shapes: {item!r} is not BATCHxSEQ (e.g. 8x128)")
        shapes.append((int(batch), int(seq)))
    return shapes


def parse_threads(text: str) -> list[int | None]:
    """'default,1' -> [None, 1]."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if item == "default":
            out.append(None)
        elif item.isdigit() and int(item) > 0:
            out.append(int(item))
        else:
            raise ValueError(f"--threads: {item!r} is neither 'default' nor a positive count")
    return out


def build_models(args, folder: str):
    """(torch model, ember model): random BERT weights made by transformers, saved to
    ``folder`` and loaded by embertext."""
    import torch
    import transformers

    from embertext.models import BertModel

    config = transformers.BertConfig(
        vocab_size=args.vocab, hidden_size=args.hidden, num_hidden_layers=args.layers,
        num_attention_heads=args.heads, intermediate_size=args.intermediate)
    transformers.utils.logging.disable_progress_bar()
    torch.manual_seed(0)
    reference = transformers.BertModel(config).eval()
    reference.save_pretrained(folder)
    return reference, BertModel.from_pretrained(folder)


def make_inputs(batch: int, seq: int, vocab: int, seed: int = 0):
    """(ids, attention_mask) NumPy int64 arrays: row i keeps ``seq - i * seq // (2 * batch)``
    tokens (the first row is full, the last about half), the rest is padding."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = rng.integers(1, vocab, size=(batch, seq))
    mask = np.zeros((batch, seq), dtype=np.int64)
    for i in range(batch):
        mask[i, :seq - i * seq // (2 * batch)] = 1
    ids[mask == 0] = 0
    return ids, mask


def forwards(reference, ours, ids, mask):
    """The zero-argument eval forwards under no_grad, {"ember": f, "torch": g}, and the
    largest absolute differences of their last hidden states and pooled outputs."""
    import torch

    import ember

    t_ids, t_mask = torch.from_numpy(ids), torch.from_numpy(mask)
    e_ids, e_mask = ember.tensor(ids), ember.tensor(mask)

    def run_torch():
        with torch.no_grad():
            return reference(input_ids=t_ids, attention_mask=t_mask)

    def run_ember():
        with ember.no_grad():
            return ours(e_ids, attention_mask=e_mask)

    theirs, mine = run_torch(), run_ember()
    keep = mask.astype(bool)  # padded positions are not compared: no one reads them
    diffs = {
        "last_hidden_state": float(abs(mine.last_hidden_state.numpy()
                                       - theirs.last_hidden_state.numpy())[keep].max()),
        "pooler_output": float(abs(mine.pooler_output.numpy()
                                   - theirs.pooler_output.numpy()).max()),
    }
    return {"ember": run_ember, "torch": run_torch}, diffs


def set_threads(count: int | None, defaults: dict) -> None:
    import torch

    import ember

    if count is None:
        torch.set_num_threads(defaults["torch"])
        ember.set_num_threads(defaults["ember"])
    else:
        # ember's limit goes through threadpoolctl, which reaches torch's OpenMP as well:
        # set torch's after it.
        ember.set_num_threads(count)
        torch.set_num_threads(count)


def _cpu_timed(fn, log: list):
    """``fn`` that also appends the process CPU seconds of each call to ``log``."""
    clock = time.process_time

    def call():
        start = clock()
        fn()
        log.append(clock() - start)

    return call


def time_row(contenders: dict, repeats: int, block_s: float) -> dict:
    """Wall time (the figure) and process CPU time per call of each contender, interleaved.
    With one thread the CPU time is the steadier measure on a shared machine (a descheduled
    process does not count); with more it includes the threads' spinning."""
    logs = {name: [] for name in contenders}
    stats = timing.interleaved({name: _cpu_timed(fn, logs[name])
                                for name, fn in contenders.items()},
                               repeats=repeats, block_s=block_s, budget_s=None, warmup_s=0.0,
                               min_warmup_calls=2)
    e, t = stats["ember"].samples, stats["torch"].samples
    ratios = [a / b for a, b in zip(e, t, strict=True)]  # sample i of both: one round
    cpu = {name: statistics.median(log[-len(stats[name].samples) * stats[name].number:])
           for name, log in logs.items()}  # the timed calls, not the warm-up ones
    return {
        "ember_s": stats["ember"].median, "torch_s": stats["torch"].median,
        "ratio": stats["ember"].median / stats["torch"].median,
        "round_ratio_min": min(ratios), "round_ratio_max": max(ratios),
        "ember_spread_pct": stats["ember"].spread_pct,
        "torch_spread_pct": stats["torch"].spread_pct,
        "ember_cpu_s": cpu["ember"], "torch_cpu_s": cpu["torch"],
        "cpu_ratio": cpu["ember"] / cpu["torch"],
        "samples": len(e),
    }


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def run(args) -> dict:
    import torch
    import transformers

    import ember

    shapes, threads = parse_shapes(args.shapes), parse_threads(args.threads)
    defaults = {"torch": torch.get_num_threads(), "ember": ember.get_num_threads()}
    with tempfile.TemporaryDirectory() as folder:
        reference, ours = build_models(args, folder)
    result = {
        "config": {k: getattr(args, k) for k in ("layers", "hidden", "heads", "intermediate",
                                                  "vocab")},
        "transformers": transformers.__version__, "torch": torch.__version__,
        "attn_implementation": reference.config._attn_implementation,
        "default_threads": defaults, "cores": os.cpu_count(), "rows": [],
    }
    print(f"BERT {args.layers} layers, hidden {args.hidden}, {args.heads} heads, intermediate "
          f"{args.intermediate}, vocab {args.vocab}; transformers {transformers.__version__} "
          f"(attention: {result['attn_implementation']}), torch {torch.__version__}; "
          f"default threads torch {defaults['torch']}, ember {defaults['ember']}")
    print(f"{'threads':>7} {'shape':>7} {'ember':>9} {'torch':>9} {'ratio':>6} "
          f"{'(rounds)':>12} {'cpu ratio':>9} {'max |diff|':>10}  load before -> after")
    for count in threads:
        set_threads(count, defaults)
        for batch, seq in shapes:
            ids, mask = make_inputs(batch, seq, args.vocab)
            contenders, diffs = forwards(reference, ours, ids, mask)
            before = load()
            row = time_row(contenders, args.repeats, args.block_s)
            row.update(threads=count or "default", batch=batch, seq=seq, max_diff=diffs,
                       load_before=before, load_after=load())
            result["rows"].append(row)
            label = "default" if count is None else str(count)
            print(f"{label:>7} {batch:>3}x{seq:<3} {row['ember_s'] * 1e3:7.1f}ms "
                  f"{row['torch_s'] * 1e3:7.1f}ms {row['ratio']:6.2f} "
                  f"({row['round_ratio_min']:.2f}-{row['round_ratio_max']:.2f}) "
                  f"{row['cpu_ratio']:9.2f} "
                  f"{max(diffs.values()):10.2e}  {row['load_before']} -> {row['load_after']}",
                  flush=True)
    set_threads(None, defaults)
    (batch, seq), bound = TARGET
    for row in result["rows"]:
        if (row["batch"], row["seq"]) == (batch, seq) and row["threads"] == "default":
            verdict = "meets" if row["ratio"] <= bound else "misses"
            print(f"target (issue 19): {batch}x{seq} at default threads <= {bound}x torch: "
                  f"{row['ratio']:.2f}x, {verdict}")
    return result


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        import transformers  # noqa: F401
    except ImportError:
        print("transformers is not installed: pip install 'transformers>=5,<6'",
              file=sys.stderr)
        return 2
    result = run(args)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
        print(f"JSON: {args.json}")
    worst = max(max(r["max_diff"].values()) for r in result["rows"])
    if worst > 1e-3:  # the outputs are layer-normalized: values of order 1
        print(f"outputs differ by {worst:.2e}: the timings compare different computations",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
