"""Train a small text classifier with ember and embertext; report accuracy and tokens/s.

The pipeline is a PyTorch + torchtext/tokenizers one with the imports changed:

- a byte-level BPE tokenizer (``embertext.tokenizers``) trained on the training texts;
- a Transformer encoder (``ember.nn.TransformerEncoder``) over token and position
  embeddings, mean-pooled over the non-padding tokens, then a linear classifier;
- a ``DataLoader`` whose batches group texts of similar length
  (``embertext.data.BucketBatchSampler``), padded by ``embertext.transforms.ToTensor``;
- a progress bar (tqdm, when installed), then the model and tokenizer saved.

By default it trains on review-like sentences it writes itself (positive and negative, no
download); ``--ag-news`` uses AG_NEWS instead (downloaded into the embertext cache).

    python examples/train_text_classifier.py                 # about a minute on 2 cores
    python examples/train_text_classifier.py --epochs 1 --train-size 400 --out /tmp/clf
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import ember
from ember import nn
from ember.utils.data import DataLoader
from embertext import tokenizers
from embertext.data import BucketBatchSampler
from embertext.transforms import ToTensor

POSITIVE = ["great", "wonderful", "moving", "superb", "delightful", "brilliant", "charming",
            "funny", "beautiful", "gripping"]
NEGATIVE = ["dull", "awful", "boring", "clumsy", "tedious", "terrible", "bland", "painful",
            "silly", "forgettable"]
SUBJECTS = ["The film", "This movie", "The plot", "The cast", "Its ending", "The soundtrack",
            "The director's latest", "The sequel"]
FILLERS = ["really", "truly", "quite", "somewhat", "utterly", "at times", "overall"]


def synthetic_reviews(n, seed):
    """``n`` (label, text) pairs: label 1 for the positive words, 0 for the negative ones,
    with a contrasting clause now and then so that a bag of words is not quite enough."""
    rng = random.Random(seed)
    data = []
    for _ in range(n):
        label = rng.randint(0, 1)
        main, other = (POSITIVE, NEGATIVE) if label else (NEGATIVE, POSITIVE)
        words = [rng.choice(SUBJECTS), "was", rng.choice(FILLERS), rng.choice(main)]
        if rng.random() < 0.4:
            words += ["though a bit", rng.choice(other)]
        words += ["and", rng.choice(main) + rng.choice([".", "!", "..."])]
        data.append((label, " ".join(words)))
    return data


def ag_news(train_size, test_size):
    from embertext.datasets import AG_NEWS

    train, test = AG_NEWS(split=("train", "test"))

    def take(dataset, n):
        rows = []
        for label, text in dataset:
            rows.append((label - 1, text))
            if len(rows) == n:
                break
        return rows

    return take(train, train_size), take(test, test_size), 4


class Classifier(nn.Module):
    """Token + position embeddings -> Transformer encoder -> masked mean -> linear."""

    def __init__(self, vocab_size, classes, dim=64, heads=4, layers=2, max_len=128, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=pad_id)
        self.position = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=2 * dim, dropout=0.1,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        padding = ids == self.pad_id
        positions = ember.arange(ids.shape[1]).unsqueeze(0)
        x = self.encoder(self.embed(ids) + self.position(positions),
                         src_key_padding_mask=padding)
        keep = (~padding).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        return self.head(pooled)


def train_tokenizer(texts, vocab_size):
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE())
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=2, special_tokens=["<pad>"], show_progress=False,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(texts, trainer)
    return tokenizer


def progress(iterable, total, desc, enabled):
    if not enabled:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, total=total, desc=desc, leave=False)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--train-size", type=int, default=2000)
    parser.add_argument("--test-size", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--vocab-size", type=int, default=600)
    parser.add_argument("--max-len", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ag-news", action="store_true", help="train on AG_NEWS (downloads)")
    parser.add_argument("--out", type=Path, default=Path("text_classifier"),
                        help="folder for model.pt and tokenizer.json")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    ember.manual_seed(args.seed)
    if args.ag_news:
        train_data, test_data, classes = ag_news(args.train_size, args.test_size)
    else:
        train_data = synthetic_reviews(args.train_size, args.seed)
        test_data = synthetic_reviews(args.test_size, args.seed + 1)
        classes = 2

    start = time.perf_counter()
    tokenizer = train_tokenizer([text for _, text in train_data], args.vocab_size)
    pad_id = tokenizer.token_to_id("<pad>")
    tokenizer.enable_truncation(args.max_len)
    print(f"tokenizer: {tokenizer.get_vocab_size()} tokens, trained in "
          f"{time.perf_counter() - start:.1f} s")

    def encode(data):
        encodings = tokenizer.encode_batch([text for _, text in data])
        return [(e.ids, label) for e, (label, _) in zip(encodings, data)]

    train_set, test_set = encode(train_data), encode(test_data)
    to_tensor = ToTensor(padding_value=pad_id)

    def collate(batch):
        return to_tensor([ids for ids, _ in batch]), ember.tensor([label for _, label in batch])

    def loader(dataset, shuffle):
        sampler = BucketBatchSampler([len(ids) for ids, _ in dataset], args.batch_size,
                                     bucket_size_multiplier=20, shuffle=shuffle)
        return DataLoader(dataset, batch_sampler=sampler, collate_fn=collate)

    model = Classifier(tokenizer.get_vocab_size(), classes, max_len=args.max_len, pad_id=pad_id)
    optimizer = ember.optim.AdamW(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    train_loader = loader(train_set, shuffle=True)
    tokens = 0
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for ids, labels in progress(train_loader, len(train_loader), f"epoch {epoch}",
                                    not args.no_progress):
            loss = loss_fn(model(ids), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(labels)
            tokens += int((ids != pad_id).sum().item())
        print(f"epoch {epoch}: loss {total / len(train_set):.4f}")
    elapsed = time.perf_counter() - start

    model.eval()
    correct = 0
    with ember.no_grad():
        for ids, labels in loader(test_set, shuffle=False):
            correct += int((model(ids).argmax(-1) == labels).sum().item())
    accuracy = correct / len(test_set)
    print(f"test accuracy: {accuracy:.3f} ({correct}/{len(test_set)})")
    print(f"training: {tokens / elapsed:.0f} tokens/s ({elapsed:.1f} s)")

    args.out.mkdir(parents=True, exist_ok=True)
    ember.save(model.state_dict(), args.out / "model.pt")
    tokenizer.save(str(args.out / "tokenizer.json"))
    print(f"saved {args.out / 'model.pt'} and {args.out / 'tokenizer.json'}")
    return accuracy


if __name__ == "__main__":
    main()
