"""Records torchvision 0.29's video models into the test data: the state-dict keys and shapes
of each builder (``weights=None``) and each weights enum's URL, metadata and preset transform
into tests/vision/data/torchvision_video.json.gz.

Run with torch 2.14.1 + torchvision 0.29.1 (an environment of their own):
``python tools/record_torchvision_video.py``.
"""

import gzip
import json
from pathlib import Path

import torchvision
from torchvision.models import video

DATA = Path(__file__).resolve().parent.parent / "tests" / "vision" / "data"
NAMES = ["r3d_18", "mc3_18", "r2plus1d_18", "s3d", "mvit_v1_b", "mvit_v2_s", "swin3d_t",
         "swin3d_s", "swin3d_b"]


def keys_and_shapes(model):
    return [f"{k} {'x'.join(map(str, v.shape))}" for k, v in model.state_dict().items()]


def main():
    models, weights = {}, {}
    for name in NAMES:
        models[name] = keys_and_shapes(getattr(video, name)(weights=None))
        enum = torchvision.models.get_model_weights(name)
        weights[enum.__name__] = {
            member: {"url": w.url, "meta": w.meta, "transforms": repr(w.transforms())}
            for member, w in enum.__members__.items()}
    record = {"models": models, "weights": weights}
    (DATA / "torchvision_video.json.gz").write_bytes(
        gzip.compress(json.dumps(record, default=list).encode(), mtime=0))


if __name__ == "__main__":
    main()
