"""Fine-tune a ResNet-18 on an image folder with embervision, report accuracy, save the model.

The script first writes a small image-classification data set as PNG files in
torchvision's ImageFolder layout (``<out>/data/{train,val}/<class>/<n>.png``: three classes
of pictures, discs, squares and stripes of random colours on noise), then trains
``embervision.models.resnet18`` on it with the usual train and eval transforms, a DataLoader
with worker processes and a tqdm progress bar, prints the validation accuracy after each
epoch and saves the weights with ``ember.save``. The code is what it would be with PyTorch
and torchvision: replace ``ember`` by ``torch`` and ``embervision`` by ``torchvision``.

``--weights DEFAULT`` starts from the ImageNet weights (downloaded once, or put in
``$EMBER_HOME/hub/checkpoints``); without it the network starts from random weights.

    python examples/finetune_imagefolder.py                 # 1-3 minutes on 2 cores
    python examples/finetune_imagefolder.py --epochs 1 --per-class 8 --workers 0
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw
from tqdm import tqdm

import ember
import embervision.transforms as T
from ember import nn
from ember.utils.data import DataLoader
from embervision import datasets, models

CLASSES = ("disc", "square", "stripes")


def write_image_folder(root: Path, per_class: int, size: int, seed: int) -> None:
    """Writes ``per_class`` PNG images of each class into ``root/<class>/``."""
    rng = np.random.default_rng(seed)
    for label in CLASSES:
        (root / label).mkdir(parents=True, exist_ok=True)
        for n in range(per_class):
            noise = rng.integers(0, 90, (size, size, 3), dtype=np.uint8)
            img = Image.fromarray(noise)
            draw = ImageDraw.Draw(img)
            color = tuple(int(c) for c in rng.integers(120, 256, 3))
            s = int(rng.integers(size // 3, size * 2 // 3))
            x, y = (int(v) for v in rng.integers(0, size - s, 2))
            if label == "disc":
                draw.ellipse([x, y, x + s, y + s], fill=color)
            elif label == "square":
                draw.rectangle([x, y, x + s, y + s], fill=color)
            else:
                for k in range(0, size, 6):
                    draw.rectangle([k, 0, k + 2, size], fill=color)
            img.save(root / label / f"{n}.png")


def evaluate(model, loader) -> float:
    model.eval()
    correct = total = 0
    with ember.no_grad():
        for images, labels in loader:
            correct += int((model(images).argmax(1) == labels).sum())
            total += labels.shape[0]
    return correct / max(total, 1)


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("finetune-out"))
    parser.add_argument("--per-class", type=int, default=40, help="training images per class")
    parser.add_argument("--size", type=int, default=40, help="side of the written images")
    parser.add_argument("--crop", type=int, default=32, help="side of the network's input")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=None, help="stop each epoch early")
    parser.add_argument("--weights", default=None, help="e.g. DEFAULT for ImageNet weights")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    ember.manual_seed(args.seed)
    data = args.out / "data"
    write_image_folder(data / "train", args.per_class, args.size, args.seed)
    write_image_folder(data / "val", max(args.per_class // 4, 2), args.size, args.seed + 1)

    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    train_tf = T.Compose([
        T.RandomResizedCrop(args.crop, scale=(0.6, 1.0)), T.RandomHorizontalFlip(),
        T.ColorJitter(0.2, 0.2, 0.2), T.ToTensor(), T.Normalize(mean, std),
    ])
    eval_tf = T.Compose([T.Resize(args.crop), T.CenterCrop(args.crop), T.ToTensor(),
                         T.Normalize(mean, std)])
    train_set = datasets.ImageFolder(data / "train", transform=train_tf)
    val_set = datasets.ImageFolder(data / "val", transform=eval_tf)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.workers)
    val_loader = DataLoader(val_set, batch_size=64, num_workers=args.workers)

    model = models.resnet18(weights=args.weights)
    model.fc = nn.Linear(model.fc.in_features, len(train_set.classes))
    optimizer = ember.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    criterion = nn.CrossEntropyLoss()

    accuracy = 0.0
    start = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        bar = tqdm(train_loader, desc=f"epoch {epoch + 1}/{args.epochs}", leave=False)
        for step, (images, labels) in enumerate(bar):
            if args.max_steps is not None and step >= args.max_steps:
                break
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            bar.set_postfix(loss=f"{float(loss):.3f}")
        accuracy = evaluate(model, val_loader)
        print(f"epoch {epoch + 1}: validation accuracy {accuracy:.1%} "
              f"({time.perf_counter() - start:.0f} s)")
    path = args.out / "resnet18_finetuned.pt"
    ember.save(model.state_dict(), path)
    print(f"classes {train_set.classes}; accuracy {accuracy:.1%}; model saved to {path}")
    return accuracy


if __name__ == "__main__":
    main()
