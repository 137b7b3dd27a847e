"""Keyword spotting: log-mel spectrograms, SpecAugment and a small CNN on a synthesized
speech-commands dataset.

The script writes a small dataset in the Speech Commands layout (one folder of one-second
16 kHz WAV files per class, with validation_list.txt and testing_list.txt), where each
"word" is a sound with its own signature: tones, chirps, noise bursts. It reads it back with
emberaudio.datasets.SPEECHCOMMANDS, turns each clip into a log-mel spectrogram
(emberaudio.transforms.MelSpectrogram + AmplitudeToDB: 40 mel bands, 25 ms windows every
10 ms), masks random time and frequency bands of the training batches
(emberaudio.transforms.SpecAugment), trains a four-block CNN with a progress bar, reports the
test accuracy and saves the model.

    python examples/keyword_spotting.py --epochs 4 --out kws
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import soundfile

import ember
import emberaudio
from ember import nn
from ember.utils.data import DataLoader

try:
    from tqdm import tqdm
except ImportError:  # the bar is optional
    def tqdm(iterable, **kwargs):
        return iterable

RATE = 16000
LABELS = ["tone", "high", "chirp", "noise", "pulse", "silence"]


def _word(label: str, rng: np.random.Generator) -> np.ndarray:
    """One second of the sound that stands for ``label``, at a random pitch, loudness and
    onset, over background noise."""
    n = int(rng.integers(RATE // 3, RATE // 2))
    t = np.arange(n) / RATE
    f = rng.uniform(0.85, 1.15)
    if label == "tone":
        sound = np.sin(2 * np.pi * 440 * f * t)
    elif label == "high":
        sound = np.sin(2 * np.pi * 1800 * f * t)
    elif label == "chirp":
        sound = np.sin(2 * np.pi * (300 + 2500 * t / t[-1] / 2) * f * t)
    elif label == "noise":
        sound = rng.standard_normal(n) * 0.5
    elif label == "pulse":
        sound = np.sin(2 * np.pi * 700 * f * t) * (np.sin(2 * np.pi * 12 * t) > 0)
    else:
        sound = np.zeros(n)
    sound *= np.hanning(n) * rng.uniform(0.3, 0.8)
    clip = rng.standard_normal(RATE) * 0.01
    start = int(rng.integers(0, RATE - n))
    clip[start:start + n] += sound
    return np.clip(clip, -1, 1).astype(np.float32)


def synthesize(root: Path, per_class: int, seed: int = 0) -> Path:
    """Writes the dataset under ``root/SpeechCommands/speech_commands_v0.02``."""
    rng = np.random.default_rng(seed)
    folder = root / "SpeechCommands" / "speech_commands_v0.02"
    validation, testing = [], []
    for label in LABELS:
        (folder / label).mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            speaker = f"{rng.integers(0, 2 ** 32):08x}"
            name = f"{label}/{speaker}_nohash_{i}.wav"
            soundfile.write(folder / name, _word(label, rng), RATE, subtype="PCM_16")
            (validation if i % 10 == 8 else testing if i % 10 == 9 else []).append(name)
    (folder / "validation_list.txt").write_text("\n".join(validation) + "\n")
    (folder / "testing_list.txt").write_text("\n".join(testing) + "\n")
    return folder


class KeywordCNN(nn.Module):
    """Four convolution blocks on a ``(batch, 1, n_mels, frames)`` log-mel spectrogram, global
    average pooling and a linear head."""

    def __init__(self, n_output: int = 35, n_channel: int = 16) -> None:
        super().__init__()
        widths = [n_channel, n_channel, 2 * n_channel, 2 * n_channel]
        layers, in_ch = [], 1
        for out_ch in widths:
            layers += [nn.Conv2d(in_ch, out_ch, kernel_size=3, padding=1),
                       nn.BatchNorm2d(out_ch), nn.ReLU(), nn.MaxPool2d(2)]
            in_ch = out_ch
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(2 * n_channel, n_output)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        x = self.features(x)
        x = x.mean((-2, -1))  # global average pooling over frequency and time
        return nn.functional.log_softmax(self.fc(x), dim=-1)


class LogMel(nn.Module):
    """Waveforms ``(batch, 1, time)`` to standardised log-mel spectrograms
    ``(batch, 1, n_mels, frames)``."""

    def __init__(self, n_mels: int = 40) -> None:
        super().__init__()
        self.mel = emberaudio.transforms.MelSpectrogram(RATE, n_fft=400, hop_length=160,
                                                        n_mels=n_mels)
        self.to_db = emberaudio.transforms.AmplitudeToDB(top_db=80.0)

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        db = self.to_db(self.mel(waveform))
        return (db - db.mean((-2, -1), keepdim=True)) / (db.std((-2, -1), keepdim=True) + 1e-5)


def collate(items, features):
    """Stacks one-second clips (padded or cut to 16000 frames) as log-mel spectrograms."""
    waves = []
    for waveform, *_ in items:
        waveform = waveform[:, :RATE]
        if waveform.shape[-1] < RATE:
            waveform = nn.functional.pad(waveform, (0, RATE - waveform.shape[-1]))
        waves.append(waveform)
    targets = ember.tensor([LABELS.index(item[2]) for item in items])
    with ember.no_grad():
        return features(ember.stack(waves)), targets


def evaluate(model, loader) -> float:
    model.eval()
    correct = total = 0
    with ember.no_grad():
        for x, y in loader:
            correct += int((model(x).argmax(-1) == y).sum())
            total += len(y)
    return correct / max(total, 1)


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("kws"), help="dataset and model folder")
    parser.add_argument("--per-class", type=int, default=60, help="clips per class")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    ember.manual_seed(args.seed)
    synthesize(args.out, args.per_class, args.seed)
    features = LogMel()
    augment = emberaudio.transforms.SpecAugment(n_time_masks=2, time_mask_param=12,
                                                n_freq_masks=2, freq_mask_param=6)
    subsets = {name: emberaudio.datasets.SPEECHCOMMANDS(args.out, subset=name)
               for name in ("training", "validation", "testing")}
    print({name: len(data) for name, data in subsets.items()})
    loaders = {name: DataLoader(data, batch_size=args.batch_size, shuffle=name == "training",
                                collate_fn=lambda items: collate(items, features))
               for name, data in subsets.items()}
    model = KeywordCNN(n_output=len(LABELS))
    optimizer = ember.optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-4)
    start = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        for x, y in tqdm(loaders["training"], desc=f"epoch {epoch + 1}", leave=False):
            optimizer.zero_grad()
            loss = nn.functional.nll_loss(model(augment(x)), y)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch + 1}: loss {float(loss):.3f}, validation accuracy "
              f"{evaluate(model, loaders['validation']):.3f}")
    accuracy = evaluate(model, loaders["testing"])
    print(f"test accuracy {accuracy:.3f} after {time.perf_counter() - start:.1f} s")
    ember.save(model.state_dict(), args.out / "kws_cnn.pt")
    print(f"saved {args.out / 'kws_cnn.pt'}")
    return accuracy


if __name__ == "__main__":
    main()
