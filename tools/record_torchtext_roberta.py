"""Records torchtext 0.18's RoBERTa / XLM-R (``torchtext.models.roberta``) into the test data
tests/text/data/torchtext_roberta.pt.gz (``torch.save``, gzipped; ``ember.load`` reads it):

- for small ``RobertaEncoderConf`` configurations, fixed random weights (the state dict) and
  the state-dict keys and shapes, token batches padded with ``padding_idx``, and the outputs
  of ``RobertaModel`` in evaluation (with and without autograd: PyTorch's nested-tensor path
  zeroes the padded positions only without it), with ``masked_tokens``, with a
  ``RobertaClassificationHead``, of ``TransformerEncoder(return_all_layers=True)``, of the
  wrapper ``TransformerEncoderLayer`` and the positions of ``PositionalEmbedding``;
- the state-dict keys of each configuration's layer count (24 layers: the large encoders);
- each pretrained bundle's URL, ``encoderConf`` and transform: which files it asks for,
  its stages, and its ids on texts, run on a tiny SentencePiece model, tiny GPT-2 BPE files
  and vocabularies this tool writes (their bytes are stored too, vocabularies as torchtext
  pickles them, so that the tests load torchtext's vocabulary files).

Run with torchtext 0.18 + torch 2.3 (an environment of their own):
``python tools/record_torchtext_roberta.py``.
"""

import gzip
import io
import json
import os
import tempfile
from collections import OrderedDict
from dataclasses import asdict
from pathlib import Path

import torch
import torchtext

torchtext.disable_torchtext_deprecation_warning()

import torchtext.transforms as T  # noqa: E402
from torchtext.data.functional import generate_sp_model  # noqa: E402
from torchtext.models import roberta  # noqa: E402
from torchtext.models.roberta import bundler, modules  # noqa: E402
from torchtext.vocab import vocab as make_vocab  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "tests" / "text" / "data"
CONFIGS = {
    "post_norm": dict(vocab_size=40, embedding_dim=16, ffn_dimension=32, padding_idx=1,
                      max_seq_len=24, num_attention_heads=4, num_encoder_layers=2),
    "pre_norm": dict(vocab_size=37, embedding_dim=12, ffn_dimension=20, padding_idx=0,
                     max_seq_len=16, num_attention_heads=2, num_encoder_layers=3,
                     normalize_before=True),
}
BUNDLES = ["XLMR_BASE_ENCODER", "XLMR_LARGE_ENCODER", "ROBERTA_BASE_ENCODER",
           "ROBERTA_LARGE_ENCODER", "ROBERTA_DISTILLED_ENCODER"]
TEXTS = ["Hello world", "How are you!", "hello hello world, world", "hello " * 300,
         "  How   are you  ", "hello\tworld\nHELLO", ""]
CORPUS = ["hello world", "how are you", "hello there, how is the world", "you are here",
          "the world is round", "where are you now", "hello again world"] * 20


def keys_and_shapes(state_dict):
    return [f"{k} {'x'.join(map(str, v.shape))}" for k, v in state_dict.items()]


def tokens(config, seed):
    """A right-padded batch: lengths 7, 5, 3 (the first token is never padding)."""
    g = torch.Generator().manual_seed(seed)
    pad = config["padding_idx"]
    ids = torch.randint(3, config["vocab_size"], (3, 7), generator=g)
    for row, length in enumerate([7, 5, 3]):
        ids[row, length:] = pad
    return ids


def record_model(name, config):
    torch.manual_seed(len(name))
    conf = roberta.RobertaEncoderConf(**config)
    head = roberta.RobertaClassificationHead(num_classes=3, input_dim=conf.embedding_dim)
    model = roberta.RobertaModel(conf, head=head)
    with torch.no_grad():  # every weight away from its initial value (norms included)
        for key, parameter in model.named_parameters():
            parameter.normal_(1.0 if key.endswith("norm.weight") or ".norm" in key and
                              key.endswith("weight") else 0.0, 0.3)
    model.eval()
    x = tokens(config, len(name) + 1)
    masked = torch.zeros_like(x, dtype=torch.bool)
    masked[0, 1], masked[1, 4], masked[2, 0] = True, True, True
    encoder = model.encoder
    transformer = encoder.transformer
    out = {"config": config, "state_dict": model.state_dict(),
           "keys": keys_and_shapes(model.state_dict()), "tokens": x, "masked_tokens": masked}
    with torch.no_grad():
        out["features_no_grad"] = encoder(x)
        out["logits_no_grad"] = model(x)
        out["masked_no_grad"] = encoder(x, masked)
        out["positions"] = transformer.positional_embedding._make_positions(x, conf.padding_idx)
    out["features_grad"] = encoder(x).detach()
    out["logits_grad"] = model(x).detach()
    transformer.return_all_layers = True
    out["all_layers"] = [s.detach() for s in transformer(x)]
    transformer.return_all_layers = False
    # torchtext's own TransformerEncoderLayer wrapper ((T, B, C) in and out) on the
    # weights of the first layer.
    layer = modules.TransformerEncoderLayer(conf.embedding_dim, conf.num_attention_heads,
                                            conf.ffn_dimension, conf.dropout,
                                            conf.normalize_before)
    layer.better_transformer.load_state_dict(transformer.layers.layers[0].state_dict())
    layer.eval()
    g = torch.Generator().manual_seed(7)
    hidden = torch.randn(x.shape[1], x.shape[0], conf.embedding_dim, generator=g)
    out["layer_input"] = hidden
    out["layer_state_dict"] = layer.state_dict()
    out["layer_output"] = layer(hidden, x.eq(conf.padding_idx)).detach()
    out["layer_keys"] = keys_and_shapes(layer.state_dict())
    return out


def bytes_to_unicode_table():
    return T.bytes_to_unicode()


def varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def read_varint(data, i):
    """The varint at ``data[i:]`` and the index after it."""
    value, shift = 0, 0
    while True:
        byte = data[i]
        value |= (byte & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if byte < 0x80:
            return value, i


def identity_normalizer(model):
    """The SentencePiece model with its normalizer (field 3 of ModelProto: NFKC and a 240 kB
    compiled character map) replaced by the identity one, keeping the dummy prefix and the
    whitespace handling: the test data stays small."""
    out, i = bytearray(), 0
    while i < len(model):
        start = i
        key, i = read_varint(model, i)
        if key & 7 == 0:
            _, i = read_varint(model, i)
        elif key & 7 == 2:
            length, i = read_varint(model, i)
            i += length
        else:
            raise ValueError(f"unexpected wire type {key & 7} in the SentencePiece model")
        if key >> 3 != 3:
            out += model[start:i]
    spec = b"\x0a\x08identity" + b"\x18\x01\x20\x01\x28\x01"
    return bytes(out) + b"\x1a" + varint(len(spec)) + spec


def write_assets(folder):
    """A tiny unigram SentencePiece model, tiny GPT-2 BPE files, and the two vocabularies
    built from them the way fairseq's dictionaries are laid out (<s>, <pad>, </s>, <unk>)."""
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    here = os.getcwd()
    os.chdir(folder)  # relative paths: the model records its input's path
    try:
        generate_sp_model("corpus.txt", vocab_size=28, model_type="unigram", model_prefix="spm")
    finally:
        os.chdir(here)
    model = folder / "spm.model"
    model.write_bytes(identity_normalizer(model.read_bytes()))
    sp = T.SentencePieceTokenizer(str(model))
    pieces = [sp.sp_model.IdToPiece(i) for i in range(sp.sp_model.GetPieceSize())][3:]
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    xlmr_vocab = make_vocab(OrderedDict((p, 1) for p in specials + pieces[:-5]))
    xlmr_vocab.set_default_index(3)

    byte_chars = list(bytes_to_unicode_table().values())
    encoder = {c: i for i, c in enumerate(byte_chars)}
    merges = ["h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "l d", "Ġwor ld",
              "H e", "He ll", "Hell o", "o w", "H ow", "Ġ a", "r e", "Ġa re", "Ġ y", "o u",
              "Ġy ou", "Ġ h", "Ġh e", "Ġhe ll", "Ġhell o"]
    for merge in merges:
        encoder["".join(merge.split())] = len(encoder)
    (folder / "encoder.json").write_text(json.dumps(encoder), encoding="utf-8")
    (folder / "vocab.bpe").write_text("#version: 0.2\n" + "\n".join(merges) + "\n",
                                      encoding="utf-8")
    ids = [str(i) for i in range(len(encoder)) if i % 3 != 1]
    roberta_vocab = make_vocab(OrderedDict((t, 1) for t in specials + ids))
    roberta_vocab.set_default_index(3)
    for vocab, file in [(xlmr_vocab, "xlmr.vocab.pt"), (roberta_vocab, "roberta.vocab.pt")]:
        torch.save(vocab, folder / file)
    return {"xlmr.sentencepiece.bpe.model": folder / "spm.model",
            "xlmr.vocab.pt": folder / "xlmr.vocab.pt",
            "gpt2_bpe_encoder.json": folder / "encoder.json",
            "gpt2_bpe_vocab.bpe": folder / "vocab.bpe",
            "roberta.vocab.pt": folder / "roberta.vocab.pt"}


def describe(stage):
    name = type(stage).__name__
    if isinstance(stage, T.Truncate):
        return [name, stage.max_seq_len]
    if isinstance(stage, T.AddToken):
        return [name, stage.token, stage.begin]
    return [name]


def record_bundles(assets):
    """Each bundle's transform, its downloads answered with the tiny files."""
    asked = []

    def local(url):
        asked.append(url)
        return str(assets[url.rsplit("/", 1)[1]])

    real_sp, real_bpe, real_load = T.SentencePieceTokenizer, T.GPT2BPETokenizer, \
        bundler.load_state_dict_from_url

    class SentencePieceTokenizer(real_sp):
        def __init__(self, sp_model_path):
            super().__init__(local(sp_model_path))

    class GPT2BPETokenizer(real_bpe):
        def __init__(self, encoder_json_path, vocab_bpe_path, return_tokens=False):
            super().__init__(local(encoder_json_path), local(vocab_bpe_path), return_tokens)

    T.SentencePieceTokenizer, T.GPT2BPETokenizer = SentencePieceTokenizer, GPT2BPETokenizer
    bundler.load_state_dict_from_url = lambda url, **kwargs: torch.load(local(url))
    out = {}
    try:
        for name in BUNDLES:
            bundle = getattr(roberta, name)
            asked.clear()
            transform = bundle.transform()
            out[name] = {"path": bundle._path, "encoder_conf": asdict(bundle.encoderConf),
                         "head_is_none": bundle._head is None, "files": list(asked),
                         "stages": [describe(s) for s in transform],
                         "ids": transform(TEXTS), "ids_one": transform(TEXTS[0])}
    finally:
        T.SentencePieceTokenizer, T.GPT2BPETokenizer = real_sp, real_bpe
        bundler.load_state_dict_from_url = real_load
    return out


def main():
    record = {"models": {name: record_model(name, config) for name, config in CONFIGS.items()}}
    with torch.device("meta"):  # the keys of the pretrained sizes, without their memory
        record["bundle_keys"] = {
            name: keys_and_shapes(roberta.RobertaModel(getattr(roberta, name).encoderConf)
                                  .state_dict()) for name in BUNDLES}
    with tempfile.TemporaryDirectory() as tmp:
        assets = write_assets(Path(tmp))
        record["bundles"] = record_bundles(assets)
        record["assets"] = {name: path.read_bytes() for name, path in assets.items()}
    record["texts"] = TEXTS
    buffer = io.BytesIO()
    torch.save(record, buffer)
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / "torchtext_roberta.pt.gz").write_bytes(gzip.compress(buffer.getvalue(), mtime=0))


if __name__ == "__main__":
    main()
