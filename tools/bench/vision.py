#!/usr/bin/env python
"""embervision against torch + torchvision on the CPU: issue 18's four speed targets.

Rows (each timed interleaved with torch in this one process; the figure is the median
over blocks, the spread the interquartile range, as in tools/bench/timing.py):

- ``resnet50_eval``: ResNet-50 forward in eval mode under no_grad, batch 32 x 3 x 224 x 224.
  Target: time ember / torch <= 1.2.
- ``resnet18_train``: one ResNet-18 training step (forward, cross-entropy, backward, SGD
  with momentum 0.9 and weight decay 1e-4), batch 32 x 3 x 224 x 224: the per-device batch
  and crop of torchvision's ImageNet reference (references/classification/train.py,
  ``--batch-size 32``). Target: time ember / torch <= 1.2.
- ``transforms``: the ImageNet training pipeline on PIL images of 224 to 320 pixels a side:
  RandomResizedCrop(224), RandomHorizontalFlip, ColorJitter(0.4, 0.4, 0.4, 0.1), ToTensor,
  Normalize. Target: images/s ember / torchvision >= 1.0.
- ``nms``: ``ops.nms`` on 10,000 random boxes (IoU threshold 0.5). Target: time ember /
  torch <= 1.0.

Every row runs with both libraries at 1 intra-op thread (as in a DataLoader worker, or
one process per core) and at torch's default thread count (``--threads``).

Both models get the same weights (torch's initialisation, copied) and the same input; the
script checks that their outputs agree, that nms keeps the same boxes, and prints the
machine's load (``os.getloadavg``) before and after each row: on a shared machine a figure
means little without it.

Usage: ``python tools/bench/vision.py [--rows resnet50_eval,nms] [--repeats 7]
[--json out.json]``; ``--quick`` runs every row on small sizes (a check that the script
works; its figures are not the targets'). Needs ember, embervision, torch and torchvision.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parent
# Run as a script, Python puts tools/bench first on sys.path, where timing.py would shadow
# any module of that name: import it as the package `bench` (as run.py does).
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path[0] = str(TOOLS)
elif str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

from bench import report, timing  # noqa: E402

ROWS = ["resnet50_eval", "resnet18_train", "transforms", "nms"]
FULL = {"batch": 32, "image": 224, "images": 64, "boxes": 10_000, "crop": 224}
QUICK = {"batch": 2, "image": 64, "images": 8, "boxes": 1_000, "crop": 64}


def _load():
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _copy_weights(torch_model, ember_model, ember):
    state = {k: ember.from_numpy(v.detach().numpy().copy())
             for k, v in torch_model.state_dict().items()}
    ember_model.load_state_dict(state)


def _models(name, size, libs, train):
    """The torchvision model ``name`` and embervision's with its weights, in train or eval
    mode, and one input batch for both."""
    import numpy as np

    torch, tv, ember, ev = libs
    torch.manual_seed(0)
    theirs = getattr(tv.models, name)().train(train)
    ours = getattr(ev.models, name)().train(train)
    _copy_weights(theirs, ours, ember)
    shape = (size["batch"], 3, size["image"], size["image"])
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return ours, theirs, ember.from_numpy(x), torch.from_numpy(x.copy())


def row_resnet50_eval(size, libs):
    torch, tv, ember, ev = libs
    ours, theirs, xe, xt = _models("resnet50", size, libs, train=False)

    def ember_forward():
        with ember.no_grad():
            return ours(xe)

    def torch_forward():
        with torch.no_grad():
            return theirs(xt)

    diff = float(abs(ember_forward().numpy() - torch_forward().numpy()).max())
    return {"ember": ember_forward, "torch": torch_forward}, f"max |ember - torch| {diff:.2e}"


def row_resnet18_train(size, libs):
    import numpy as np

    torch, tv, ember, ev = libs
    ours, theirs, xe, xt = _models("resnet18", size, libs, train=True)

    y = np.random.default_rng(1).integers(0, 1000, size["batch"])
    ye, yt = ember.from_numpy(y), torch.from_numpy(y.copy())
    opt_e = ember.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    losses = {}

    def step(lib, model, opt, x, target, name):
        def run():
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(x), target)
            loss.backward()
            opt.step()
            losses.setdefault(name, loss.item())
        return run

    contenders = {"ember": step(ember, ours, opt_e, xe, ye, "ember"),
                  "torch": step(torch, theirs, opt_t, xt, yt, "torch")}
    for fn in contenders.values():
        fn()
    note = f"first loss ember {losses['ember']:.4f}, torch {losses['torch']:.4f}"
    return contenders, note


def _pil_images(count, size, seed=0):
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    images = []
    low = size["crop"]
    for _ in range(count):
        h, w = (int(v) for v in rng.integers(low, low * 10 // 7 + 1, 2))
        # smooth content with noise: gradients plus texture, as photos have
        yy, xx = np.mgrid[0:h, 0:w]
        base = np.stack([(xx * 255 // max(w - 1, 1)), (yy * 255 // max(h - 1, 1)),
                         ((xx + yy) * 127 // max(h + w - 2, 1))], -1)
        noise = rng.integers(0, 60, (h, w, 3))
        images.append(Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8)))
    return images


def _pipeline(transforms, crop):
    return transforms.Compose([
        transforms.RandomResizedCrop(crop),
        transforms.RandomHorizontalFlip(),
        transforms.ColorJitter(0.4, 0.4, 0.4, 0.1),
        transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])


def row_transforms(size, libs):
    torch, tv, ember, ev = libs
    images = _pil_images(size["images"], size)
    ours, theirs = _pipeline(ev.transforms, size["crop"]), _pipeline(tv.transforms, size["crop"])
    ember.manual_seed(0)
    torch.manual_seed(0)
    shapes = {tuple(ours(images[0]).shape), tuple(theirs(images[0]).shape)}
    if len(shapes) != 1:
        raise RuntimeError(f"the pipelines give different shapes: {shapes}")

    def run(pipeline):
        return lambda: [pipeline(image) for image in images]

    return ({"ember": run(ours), "torch": run(theirs)},
            f"{len(images)} images per call, output {shapes.pop()}")


def nms_inputs(count, seed=0):
    """``count`` boxes in a 1000 x 1000 image, sides 10 to 100, uniform scores."""
    import numpy as np

    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 1000, (count, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(10, 100, (count, 2))], 1).astype(np.float32)
    return boxes, rng.uniform(0, 1, count).astype(np.float32)


def row_nms(size, libs):
    torch, tv, ember, ev = libs
    boxes, scores = nms_inputs(size["boxes"])
    eb, es = ember.from_numpy(boxes), ember.from_numpy(scores)
    tb, ts = torch.from_numpy(boxes.copy()), torch.from_numpy(scores.copy())
    ours = ev.ops.nms(eb, es, 0.5)
    theirs = tv.ops.nms(tb, ts, 0.5)
    if ours.tolist() != theirs.tolist():
        raise RuntimeError("nms keeps other boxes than torchvision's")
    return ({"ember": lambda: ev.ops.nms(eb, es, 0.5), "torch": lambda: tv.ops.nms(tb, ts, 0.5)},
            f"{len(boxes)} boxes, {len(theirs)} kept")


TARGETS = {  # row -> (what the ratio is, its target, True when higher is better)
    "resnet50_eval": ("time ember/torch", 1.2, False),
    "resnet18_train": ("time ember/torch", 1.2, False),
    "transforms": ("images/s ember/torchvision", 1.0, True),
    "nms": ("time ember/torch", 1.0, False),
}


def _set_threads(torch, ember, count):
    torch.set_num_threads(count)
    ember.set_num_threads(count)


def measure(row, size, libs, args):
    """The row timed at each thread setting of ``--threads``: both libraries get the same
    number of intra-op threads (torch's pool; ember's BLAS and OpenMP kernels)."""
    torch, ember = libs[0], libs[2]
    contenders, note = globals()[f"row_{row}"](size, libs)
    defaults = torch.get_num_threads(), ember.get_num_threads()
    out = []
    for setting in args.threads:
        threads = defaults[0] if setting == "default" else int(setting)
        _set_threads(torch, ember, threads)
        before = _load()
        try:
            stats = timing.interleaved(contenders, repeats=args.repeats, block_s=args.block_s,
                                       budget_s=args.budget_s, warmup_s=args.warmup_s,
                                       min_warmup_calls=1)
        finally:
            torch.set_num_threads(defaults[0])
            ember.set_num_threads(defaults[1])
        e, t = stats["ember"], stats["torch"]
        # the ratio of the medians, and its range over the rounds' own ratios
        label, target, higher = TARGETS[row]
        rounds = [(b / a if higher else a / b) for a, b in zip(e.samples, t.samples)]
        ratio = t.median / e.median if higher else e.median / t.median
        out.append({
            "row": row, "threads": threads, "threads_setting": setting,
            "ember_s": e.median, "torch_s": t.median, "ember": e.to_json(),
            "torch": t.to_json(), "ratio": ratio, "ratio_min": min(rounds),
            "ratio_max": max(rounds), "ratio_label": label, "target": target,
            "met": ratio >= target if higher else ratio <= target, "note": note,
            "load_before": before, "load_after": _load(),
        })
    return out


def _line(r):
    sign = ">=" if TARGETS[r["row"]][2] else "<="
    return (f"{r['row']:15s} {r['threads']} thread{'s' if r['threads'] > 1 else ' '}  "
            f"ember {report.format_seconds(r['ember_s'])}"
            f" (IQR {r['ember']['spread_pct']:.0f}%)  torch {report.format_seconds(r['torch_s'])}"
            f" (IQR {r['torch']['spread_pct']:.0f}%)  {r['ratio_label']} {r['ratio']:.2f}"
            f" (rounds {r['ratio_min']:.2f}-{r['ratio_max']:.2f}), target {sign} {r['target']}:"
            f" {'met' if r['met'] else 'MISSED'}  [{r['note']}; {r['load_before']} -> "
            f"{r['load_after']}]")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated, of " +
                        ", ".join(ROWS))
    parser.add_argument("--repeats", type=int, default=7, help="rounds of interleaved blocks")
    parser.add_argument("--block-s", type=float, default=1.0, help="seconds per block")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="stop a row's rounds after this many seconds (at least 3 rounds)")
    parser.add_argument("--warmup-s", type=float, default=0.5)
    parser.add_argument("--threads", default="1,default",
                        help="intra-op thread settings, each a number or 'default' (torch's "
                             "default count), given to both libraries")
    parser.add_argument("--quick", action="store_true", help="small sizes: checks the script")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    args.threads = [t.strip() for t in args.threads.split(",") if t.strip()]
    if not args.threads or not all(t == "default" or t.isdigit() and int(t) > 0
                                   for t in args.threads):
        parser.error("--threads takes positive numbers and 'default', comma-separated")
    unknown = sorted(set(rows) - set(ROWS))
    if unknown:
        parser.error(f"unknown rows {unknown}; the rows are {ROWS}")

    import torch
    import torchvision as tv

    import ember
    import embervision as ev
    import embervision.ops  # noqa: F401 - the submodules the rows use
    import embervision.transforms  # noqa: F401

    size = QUICK if args.quick else FULL
    machine = report.machine_info(torch, ember)
    machine["torchvision"] = tv.__version__
    machine["embervision"] = ev.__version__
    print(f"{machine['cpu']}, {machine['usable_cores']} usable cores; torch {machine['torch']} "
          f"({machine['torch_threads']} threads), torchvision {tv.__version__}, ember "
          f"{machine['ember']}, NumPy {machine['numpy']} ({machine['numpy_blas']}); "
          f"sizes {size}; {_load()}")
    results = []
    for row in rows:
        start = time.perf_counter()
        for r in measure(row, size, (torch, tv, ember, ev), args):
            r["wall_s"] = time.perf_counter() - start
            print(_line(r), flush=True)
            results.append(r)
    if args.json:
        command = "python tools/bench/vision.py " + shlex.join(argv if argv is not None
                                                               else sys.argv[1:])
        Path(args.json).write_text(json.dumps(
            {"command": command.strip(), "machine": machine, "sizes": size,
             "results": results}, indent=1))
    missed = [r["row"] for r in results if not r["met"]]
    print("all targets met" if not missed else f"missed: {', '.join(missed)}"
          + ("" if not args.quick else " (quick sizes: not the targets' figures)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
