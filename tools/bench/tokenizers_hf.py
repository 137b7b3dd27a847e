"""Tokenizer encoding speed: embertext.tokenizers against Hugging Face `tokenizers`.

Byte-level BPE (GPT-2 style), WordPiece (BERT style) and Unigram tokenizers are trained by
Hugging Face `tokenizers` on a generated multilingual corpus (accents, CJK, Cyrillic, Greek,
Arabic, emoji, numbers, odd whitespace), saved as tokenizer.json and loaded by both
libraries, which must give the same ids. Then, interleaved, repeated and reported as the
median (min-max) texts per second:

- ``encode`` of every text in a loop (one thread);
- ``encode_batch`` with one thread and with two (embertext: ``set_num_threads``; Hugging
  Face: TOKENIZERS_PARALLELISM and RAYON_NUM_THREADS=2).

Usage: ``python tools/bench/tokenizers_hf.py [--texts 6000] [--repeats 5]`` (needs
``tokenizers``; about a minute).
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

os.environ.setdefault("RAYON_NUM_THREADS", "2")  # before tokenizers starts its thread pool

WORDS = {
    "en": "the of and to in is that for it with as was on be by this are from at or an but "
          "not have they which one you were all we her she there been their has would will "
          "tokenizer encoding throughput benchmark international organization's they'll".split(),
    "fr": "le la les des une est dans pour que qui sur pas plus avec être café crème "
          "brûlée naïve façade élève théâtre où déjà".split(),
    "de": "der die und das ist nicht mit sich auf für Straße Größe Übung Mädchen schön "
          "über Gemütlichkeit".split(),
    "ru": "и в не на что он как это по но из у за мы так Русский текст тоже".split(),
    "el": "και το να της ο η που σε με για Ελληνικά κείμενα".split(),
    "ar": "في من على إلى أن عن مع هذا نص عربى أرقام".split(),
    "zh": "中文字符和日本語のテキスト的一是不了人我在有他这为之大来以个中上们".split() + list(
        "中文字符日本語한국어문장도있습니다"),
    "misc": "😀 😃 🇫🇷 👩‍💻 123 4567 3.14159 2²½ Ⅻ $%^&* https://example.com/a?b=1 "
            "a.b@c.org 1,000,000 -- ... (x) [y] {z}".split(),
}
WEIGHTS = {"en": 6, "fr": 2, "de": 2, "ru": 1, "el": 1, "ar": 1, "zh": 1, "misc": 1}


def corpus(count, seed=0):
    rng = random.Random(seed)
    languages = [lang for lang, w in WEIGHTS.items() for _ in range(w)]
    texts = []
    for _ in range(count):
        lang = rng.choice(languages)
        words = [rng.choice(WORDS[lang if rng.random() < 0.85 else "misc"])
                 for _ in range(rng.randint(8, 40))]
        if rng.random() < 0.5:
            words[0] = words[0].capitalize()
        joiner = " " if lang != "zh" else rng.choice(["", " "])
        text = joiner.join(words)
        if rng.random() < 0.1:
            text = "  " + text.replace(" ", rng.choice(["  ", "\t", " \n "]), 2) + " "
        texts.append(text + rng.choice([".", "!", "?", ""]))
    return texts


def train_hf(hf, kind, texts):
    if kind == "bpe":
        tok = hf.Tokenizer(hf.models.BPE())
        tok.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.post_processor = hf.processors.ByteLevel(trim_offsets=True)
        tok.decoder = hf.decoders.ByteLevel()
        trainer = hf.trainers.BpeTrainer(
            vocab_size=8000, min_frequency=2, show_progress=False,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=hf.pre_tokenizers.ByteLevel.alphabet())
    elif kind == "roberta":
        tok = hf.Tokenizer(hf.models.BPE())
        tok.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=True)
        tok.post_processor = hf.processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
        tok.decoder = hf.decoders.ByteLevel()
        trainer = hf.trainers.BpeTrainer(
            vocab_size=8000, min_frequency=2, show_progress=False,
            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
            initial_alphabet=hf.pre_tokenizers.ByteLevel.alphabet())
    elif kind == "wordpiece":
        tok = hf.Tokenizer(hf.models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = hf.normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = hf.pre_tokenizers.BertPreTokenizer()
        tok.decoder = hf.decoders.WordPiece()
        trainer = hf.trainers.WordPieceTrainer(
            vocab_size=8000, show_progress=False,
            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    else:  # unigram
        tok = hf.Tokenizer(hf.models.Unigram())
        tok.pre_tokenizer = hf.pre_tokenizers.Metaspace()
        tok.decoder = hf.decoders.Metaspace()
        trainer = hf.trainers.UnigramTrainer(
            vocab_size=4000, show_progress=False, special_tokens=["<unk>"], unk_token="<unk>")
    tok.train_from_iterator(texts, trainer)
    if kind == "wordpiece":
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = hf.processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls))
    return tok


def measure(function, texts):
    """Texts per second of wall time and of this process's CPU time (on a shared machine the
    CPU time is the steadier measure of one thread; threads need the wall time)."""
    start, cpu = time.perf_counter(), time.process_time()
    function(texts)
    return (len(texts) / (time.perf_counter() - start),
            len(texts) / max(time.process_time() - cpu, 1e-9))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=6000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--kinds", default="bpe,roberta,wordpiece,unigram")
    args = parser.parse_args()
    import tokenizers as hf

    from embertext import tokenizers as et

    texts = corpus(args.texts)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"{len(texts)} texts, {mb:.2f} MB; tokenizers {hf.__version__}; "
          f"RAYON_NUM_THREADS={os.environ['RAYON_NUM_THREADS']}")
    for kind in args.kinds.split(","):
        theirs = train_hf(hf, kind, texts)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "tokenizer.json")
            theirs.save(path)
            ours = et.Tokenizer.from_file(path)
            theirs = hf.Tokenizer.from_file(path)
        same = all(a.ids == b.ids and a.offsets == b.offsets for a, b in
                   zip(ours.encode_batch(texts[:500]), theirs.encode_batch(texts[:500])))

        def loop(tok):
            return lambda batch: [tok.encode(t) for t in batch]

        def batch(tok, threads, ours=ours):
            def run(items):
                if tok is ours:
                    et.set_num_threads(threads)
                else:
                    os.environ["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"
                tok.encode_batch(items)
            return run

        cases = {
            "encode loop, 1 thread": (loop(ours), loop(theirs)),
            "encode_batch, 1 thread": (batch(ours, 1), batch(theirs, 1)),
            "encode_batch, 2 threads": (batch(ours, 2), batch(theirs, 2)),
        }
        for function in (loop(ours), loop(theirs)):  # warm the caches
            function(texts)
        results = {name: ([], []) for name in cases}
        for _ in range(args.repeats):
            for name, (a, b) in cases.items():
                results[name][0].append(measure(a, texts))
                results[name][1].append(measure(b, texts))
        print(f"\n{kind}: same ids and offsets as Hugging Face on 500 texts: {same}")
        for clock, which in (("wall", 0), ("cpu", 1)):
            for name, (a, b) in results.items():
                if clock == "cpu" and "2 threads" in name:
                    continue
                a = [x[which] for x in a]
                b = [x[which] for x in b]
                ratios = [x / y for x, y in zip(a, b)]
                print(f"  {clock} {name:25s} embertext {statistics.median(a):8.0f}/s "
                      f"({min(a):.0f}-{max(a):.0f})  HF {statistics.median(b):8.0f}/s "
                      f"({min(b):.0f}-{max(b):.0f})  ratio {statistics.median(ratios):.2f} "
                      f"({min(ratios):.2f}-{max(ratios):.2f})")
        for label, index in (("embertext", 0), ("HF", 1)):
            one = statistics.median(x[0] for x in results["encode_batch, 1 thread"][index])
            two = statistics.median(x[0] for x in results["encode_batch, 2 threads"][index])
            print(f"  {label} 2-thread scaling (wall): {two / one:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
