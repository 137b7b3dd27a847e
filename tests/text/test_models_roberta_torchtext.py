"""embertext's torchtext-layout RoBERTa / XLM-R (embertext.models.RobertaModel, RobertaBundle and
the pretrained bundles) against torchtext 0.18, recorded by tools/record_torchtext_roberta.py
into tests/text/data/torchtext_roberta.pt.gz: state-dict keys and shapes, outputs on fixed
random weights, the bundles' URLs, configurations and transforms (on the tiny tokenizer files
and torchtext-pickled vocabularies of the recording), downloads from the caches the tests
fill, and the offline errors. No network."""

import dataclasses
import gzip
import io
import logging
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.hub
import embertext as torchtext
import embertext.utils
from embertext._download_hooks import load_state_dict_from_url
from embertext.functional import to_tensor
from embertext.models import (
    ROBERTA_BASE_ENCODER,
    ROBERTA_DISTILLED_ENCODER,
    ROBERTA_LARGE_ENCODER,
    XLMR_BASE_ENCODER,
    XLMR_LARGE_ENCODER,
    RobertaBundle,
    RobertaClassificationHead,
    RobertaEncoderConf,
    RobertaModel,
)
from embertext.models.roberta import bundler, modeling_roberta
from embertext.models.roberta.model import RobertaEncoder
from embertext.models.roberta.modules import (
    _EARLIER_NAMES,
    PositionalEmbedding,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from embertext.vocab import Vocab

DATA = Path(__file__).parent / "data" / "torchtext_roberta.pt.gz"
BUCKET = "https://download.pytorch.org/models/text/"
BUNDLES = {"XLMR_BASE_ENCODER": XLMR_BASE_ENCODER, "XLMR_LARGE_ENCODER": XLMR_LARGE_ENCODER,
           "ROBERTA_BASE_ENCODER": ROBERTA_BASE_ENCODER,
           "ROBERTA_LARGE_ENCODER": ROBERTA_LARGE_ENCODER,
           "ROBERTA_DISTILLED_ENCODER": ROBERTA_DISTILLED_ENCODER}
TOL = dict(rtol=1e-5, atol=2e-5)
# pre-norm stacks warn, as PyTorch does, that they cannot take the nested-tensor path
pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")


@pytest.fixture(scope="module")
def record():
    return ember.load(io.BytesIO(gzip.decompress(DATA.read_bytes())))


def keys_and_shapes(state_dict):
    return [f"{k} {'x'.join(map(str, v.shape))}" for k, v in state_dict.items()]


def recorded_model(entry, head=True):
    conf = RobertaEncoderConf(**entry["config"])
    classifier = RobertaClassificationHead(num_classes=3, input_dim=conf.embedding_dim)
    model = RobertaModel(conf, head=classifier if head else None)
    state_dict = entry["state_dict"] if head else {
        k: v for k, v in entry["state_dict"].items() if not k.startswith("head.")}
    model.load_state_dict(state_dict, strict=True)
    return model.eval()


def close(got, expected):
    np.testing.assert_allclose(got.detach().numpy(), expected.numpy(), **TOL)


@pytest.fixture(params=["post_norm", "pre_norm"])
def entry(request, record):
    return record["models"][request.param]


# -- the model against torchtext's ---------------------------------------------------------

def test_the_names_are_torchtexts():
    assert torchtext.models.RobertaModel is RobertaModel
    assert torchtext.models.roberta.RobertaModel is RobertaModel
    assert torchtext.models.roberta.__all__ == [
        "RobertaEncoderConf", "RobertaClassificationHead", "RobertaModel", "RobertaBundle",
        "XLMR_BASE_ENCODER", "XLMR_LARGE_ENCODER", "ROBERTA_BASE_ENCODER",
        "ROBERTA_LARGE_ENCODER", "ROBERTA_DISTILLED_ENCODER"]
    # Hugging Face's layout stays importable where it was, the encoder at transformers' path.
    from embertext.models import RobertaConfig, XLMRobertaModel
    from embertext.models.roberta import RobertaForMaskedLM, RobertaForSequenceClassification
    assert XLMRobertaModel is modeling_roberta.RobertaModel is not RobertaModel
    assert RobertaConfig is modeling_roberta.RobertaConfig
    assert RobertaForMaskedLM is modeling_roberta.RobertaForMaskedLM
    assert RobertaForSequenceClassification is modeling_roberta.RobertaForSequenceClassification
    assert dataclasses.asdict(RobertaEncoderConf()) == dict(
        vocab_size=50265, embedding_dim=768, ffn_dimension=3072, padding_idx=1, max_seq_len=514,
        num_attention_heads=12, num_encoder_layers=12, dropout=0.1, scaling=None,
        normalize_before=False)


def test_state_dict_keys_and_shapes_are_torchtexts(entry):
    model = recorded_model(entry)  # loads torchtext's state dict with strict=True
    assert keys_and_shapes(model.state_dict()) == entry["keys"]


def test_keys_and_shapes_of_the_pretrained_sizes(record):
    # The pretrained sizes are too big to build here: the same layer counts with small,
    # distinct sizes give the keys, and the shapes follow from the sizes.
    for name, bundle in BUNDLES.items():
        conf = bundle.encoderConf
        small = dataclasses.replace(conf, vocab_size=11, embedding_dim=8, ffn_dimension=12,
                                    max_seq_len=10, num_attention_heads=2)
        sizes = {11: conf.vocab_size, 8: conf.embedding_dim, 24: 3 * conf.embedding_dim,
                 12: conf.ffn_dimension, 10: conf.max_seq_len}
        expected = [f"{k} {'x'.join(str(sizes[d]) for d in v.shape)}"
                    for k, v in RobertaModel(small).state_dict().items()]
        assert expected == record["bundle_keys"][name], name


@ember.no_grad()
def test_outputs_in_evaluation_without_autograd(entry):
    # PyTorch's nested-tensor path: zeros at the padded positions (post-norm stacks).
    model = recorded_model(entry)
    x = entry["tokens"]
    close(model.encoder(x), entry["features_no_grad"])
    close(model(x), entry["logits_no_grad"])
    close(model.encoder(x, entry["masked_tokens"]), entry["masked_no_grad"])
    positions = model.encoder.transformer.positional_embedding._make_positions(
        x, entry["config"]["padding_idx"])
    np.testing.assert_array_equal(positions.numpy(), entry["positions"].numpy())


def test_outputs_with_autograd_and_all_layers(entry):
    model = recorded_model(entry)
    x = entry["tokens"]
    close(model.encoder(x), entry["features_grad"])
    close(model(x), entry["logits_grad"])
    transformer = model.encoder.transformer
    transformer.return_all_layers = True
    states = transformer(x)
    assert len(states) == entry["config"]["num_encoder_layers"] + 1
    for got, expected in zip(states, entry["all_layers"], strict=True):
        close(got, expected)
    # RobertaEncoder takes the last of the list.
    close(model.encoder(x), entry["all_layers"][-1].transpose(1, 0))


@ember.no_grad()
def test_transformer_encoder_layer_wrapper(entry):
    conf = RobertaEncoderConf(**entry["config"])
    layer = TransformerEncoderLayer(conf.embedding_dim, conf.num_attention_heads,
                                    conf.ffn_dimension, conf.dropout, conf.normalize_before)
    layer.load_state_dict(entry["layer_state_dict"], strict=True)
    assert keys_and_shapes(layer.state_dict()) == entry["layer_keys"]
    layer.eval()
    x = entry["tokens"]
    close(layer(entry["layer_input"], x.eq(conf.padding_idx)), entry["layer_output"])


def _earlier(state_dict, layer_prefixes):
    """The keys as torchtext's checkpoints before nn.TransformerEncoderLayer had them."""
    out = {}
    for key, value in state_dict.items():
        for new_prefix, old_prefix in layer_prefixes(key):
            rest = key[len(new_prefix):]
            if key.startswith(new_prefix) and rest in _EARLIER_NAMES:
                key = old_prefix + _EARLIER_NAMES[rest]
                break
        out[key] = value
    return out


@ember.no_grad()
def test_earlier_checkpoint_keys_load_strictly(entry):
    layers = entry["config"]["num_encoder_layers"]
    prefixes = [(f"encoder.transformer.layers.layers.{i}.", f"encoder.transformer.layers.{i}.")
                for i in range(layers)]
    earlier = _earlier(entry["state_dict"], lambda key: prefixes)
    assert "encoder.transformer.layers.0.attention.input_projection.weight" in earlier
    assert "encoder.transformer.layers.1.residual_mlp.mlp.3.bias" in earlier
    conf = RobertaEncoderConf(**entry["config"])
    model = RobertaBundle.build_model(conf, head=RobertaClassificationHead(3, conf.embedding_dim),
                                      checkpoint=earlier, strict=True).eval()
    close(model(entry["tokens"]), entry["logits_no_grad"])
    layer = TransformerEncoderLayer(conf.embedding_dim, conf.num_attention_heads,
                                    conf.ffn_dimension)
    layer.load_state_dict(_earlier(entry["layer_state_dict"],
                                   lambda key: [("better_transformer.", "")]), strict=True)
    close(layer.better_transformer.linear2.bias,
          entry["layer_state_dict"]["better_transformer.linear2.bias"])


def test_padding_mask_comes_from_padding_idx(entry):
    model = recorded_model(entry, head=False)
    pad = entry["config"]["padding_idx"]
    x = entry["tokens"]
    features = model.encoder(x)
    for row, length in enumerate([7, 5, 3]):
        alone = model.encoder(x[row:row + 1, :length])
        close(features[row:row + 1, :length], alone.detach())
    # more padding changes nothing at the tokens
    wider = ember.cat([x, ember.full((3, 2), pad, dtype=ember.long)], dim=1)
    close(model.encoder(wider)[:, :7], features.detach())


@ember.no_grad()
def test_positional_embedding():
    embedding = PositionalEmbedding(10, 4, pad_index=1)
    tokens = ember.tensor([[5, 6, 7, 1], [1, 5, 1, 6]])
    positions = embedding._make_positions(tokens, 1)
    assert positions.tolist() == [[2, 3, 4, 1], [1, 2, 1, 3]]
    np.testing.assert_array_equal(embedding(tokens).numpy(),
                                  embedding.embedding.weight[positions].numpy())
    assert embedding.max_positions() == 8
    # padding positions index the zero row of the padding index
    assert not embedding(tokens)[0, 3].numpy().any()


def test_attn_mask_dtype_is_checked():
    encoder = TransformerEncoder(11, 8, 1, 10, 1, 2, 16, return_all_layers=True)
    tokens = ember.tensor([[4, 5, 6]])
    with pytest.raises(AssertionError, match="float or bool"):
        encoder(tokens, ember.zeros(3, 3, dtype=ember.long))
    causal = ember.ones(3, 3, dtype=ember.bool).triu(1)
    states = encoder.eval()(tokens, causal)
    assert len(states) == 2 and states[-1].shape == (3, 1, 8)


# -- heads, freezing, training -------------------------------------------------------------

def test_head_and_freeze_encoder():
    conf = RobertaEncoderConf(vocab_size=20, embedding_dim=8, ffn_dimension=16, max_seq_len=12,
                              num_attention_heads=2, num_encoder_layers=1, dropout=0.0)
    head = RobertaClassificationHead(num_classes=2, input_dim=8, inner_dim=6, dropout=0.0,
                                     activation=ember.nn.Tanh)
    assert head.dense.weight.shape == (6, 8) and head.out_proj.weight.shape == (2, 6)
    model = RobertaModel(conf, head=head, freeze_encoder=True)
    assert not any(p.requires_grad for p in model.encoder.parameters())
    assert all(p.requires_grad for p in model.head.parameters())
    tokens = ember.tensor([[0, 5, 6, 2], [0, 7, 2, 1]])
    logits = model(tokens)
    assert logits.shape == (2, 2)
    logits.sum().backward()
    assert all(p.grad is None for p in model.encoder.parameters())
    assert all(p.grad is not None for p in model.head.parameters())
    # the head is the first token's features through dense, tanh and out_proj
    features = model.encoder(tokens)
    expected = head.out_proj(ember.tanh(head.dense(features[:, 0])))
    close(logits, expected.detach())
    trainable = RobertaModel(conf)
    assert trainable.head is None and all(p.requires_grad for p in trainable.parameters())
    trainable(tokens).sum().backward()
    assert trainable.encoder.transformer.token_embedding.weight.grad is not None
    assert isinstance(trainable.encoder, RobertaEncoder)
    with pytest.raises(AssertionError, match="RobertaEncoderConf"):
        RobertaModel(dataclasses.asdict(conf))


# -- the bundles ---------------------------------------------------------------------------

def test_bundle_urls_and_configurations(record):
    for name, bundle in BUNDLES.items():
        recorded = record["bundles"][name]
        assert bundle._path == recorded["path"]
        assert dataclasses.asdict(bundle.encoderConf) == recorded["encoder_conf"]
        assert (bundle._head is None) == recorded["head_is_none"]
        assert getattr(torchtext.models, name) is bundle
    assert XLMR_BASE_ENCODER._path == BUCKET + "xlmr.base.encoder.pt"
    assert ROBERTA_DISTILLED_ENCODER._path == BUCKET + "roberta.distilled.encoder.pt"


@pytest.fixture
def caches(tmp_path, monkeypatch, record):
    """embertext's asset cache and ember's hub cache; downloads answered from the recording's
    files (and listed) instead of the network."""
    fetched = []

    def fetch(url, path):
        fetched.append(url)
        with open(path, "wb") as f:
            f.write(record["assets"][url.rsplit("/", 1)[1]])

    monkeypatch.setattr(embertext.utils, "_CACHE_DIR", str(tmp_path / "text"))
    monkeypatch.setattr(embertext.utils, "_fetch", fetch)
    monkeypatch.setattr(ember.hub, "get_dir", lambda: str(tmp_path / "hub"))
    checkpoints = tmp_path / "hub" / "checkpoints"
    os.makedirs(checkpoints)
    for name in ["xlmr.vocab.pt", "roberta.vocab.pt"]:
        (checkpoints / name).write_bytes(record["assets"][name])
    return fetched


def describe(stage):
    name = type(stage).__name__
    if name == "Truncate":
        return [name, stage.max_seq_len]
    if name == "AddToken":
        return [name, stage.token, stage.begin]
    return [name]


def test_bundle_transforms_give_torchtexts_ids(record, caches):
    texts = record["texts"]
    for name, bundle in BUNDLES.items():
        recorded = record["bundles"][name]
        transform = bundle.transform()
        assert [describe(s) for s in transform] == recorded["stages"]
        assert transform(texts) == recorded["ids"], name
        assert transform(texts[0]) == recorded["ids_one"]
    # each tokenizer file is downloaded once; the vocabularies come from the hub cache
    assert sorted(caches) == sorted({url for b in record["bundles"].values()
                                     for url in b["files"] if not url.endswith(".pt")})


def test_torchtext_vocabularies_load_safely(record, tmp_path):
    path = tmp_path / "xlmr.vocab.pt"
    path.write_bytes(record["assets"]["xlmr.vocab.pt"])
    vocab = load_state_dict_from_url(str(path))
    assert isinstance(vocab, Vocab)
    assert vocab.get_itos()[:4] == ["<s>", "<pad>", "</s>", "<unk>"]
    assert vocab.get_default_index() == 3 and vocab["not a piece"] == 3
    # outside torchtext's downloads the safe loader still refuses torchtext's classes
    with pytest.raises(Exception, match="torchtext"):
        ember.load(str(path))
    # torchtext 0.18 refuses the first version of its vocabulary format, as here
    with zipfile.ZipFile(path) as source:
        members = {info.filename: source.read(info) for info in source.infolist()}
    pickle_name = next(n for n in members if n.endswith("data.pkl"))
    members[pickle_name] = members[pickle_name].replace(b"0.0.2", b"0.0.1")
    old = tmp_path / "old.vocab.pt"
    with zipfile.ZipFile(old, "w") as out:
        for member, data in members.items():
            out.writestr(member, data)
    with pytest.raises(RuntimeError, match="unexpected version for serialized Vocab: 0.0.1"):
        load_state_dict_from_url(str(old))


def tiny_conf():
    return RobertaEncoderConf(vocab_size=40, embedding_dim=16, ffn_dimension=32, padding_idx=1,
                              max_seq_len=24, num_attention_heads=4, num_encoder_layers=2)


@ember.no_grad()
def test_bundle_get_model_from_the_cache_with_a_head(record, caches, tmp_path, caplog):
    entry = record["models"]["post_norm"]
    checkpoints = tmp_path / "hub" / "checkpoints"
    ember.save(entry["state_dict"], str(checkpoints / "xlmr.tiny.encoder.pt"))
    bundle = RobertaBundle(_path=BUCKET + "xlmr.tiny.encoder.pt", _encoder_conf=tiny_conf(),
                           transform=lambda: bundler.xlmr_transform(254))
    # the README's program, on the tiny bundle
    model = bundle.get_model().eval()
    transform = bundle.transform()
    model_input = to_tensor(transform(["Hello world", "How are you!"]), padding_value=1)
    assert model(model_input).shape == (2, model_input.shape[1], 16)
    close(model(entry["tokens"]), entry["features_no_grad"])
    assert model.head is None
    # a head given to get_model keeps its own weights, even where the checkpoint has some
    head = RobertaClassificationHead(num_classes=3, input_dim=16)
    own = head.dense.weight.detach().numpy().copy()
    with_head = bundle.get_model(head=head).eval()
    np.testing.assert_array_equal(with_head.head.dense.weight.numpy(), own)
    close(with_head.encoder(entry["tokens"]), entry["features_no_grad"])
    # build_model takes the checkpoint's head unless told to override it
    fresh = RobertaClassificationHead(num_classes=3, input_dim=16)
    built = RobertaBundle.build_model(tiny_conf(), head=fresh, checkpoint=entry["state_dict"])
    close(built.eval()(entry["tokens"]), entry["logits_no_grad"])
    fresh = RobertaClassificationHead(num_classes=3, input_dim=16)
    own = fresh.out_proj.bias.detach().numpy().copy()
    kept = RobertaBundle.build_model(tiny_conf(), head=fresh, checkpoint=entry["state_dict"],
                                     override_checkpoint_head=True)
    np.testing.assert_array_equal(kept.head.out_proj.bias.numpy(), own)
    encoder_only = {k: v for k, v in entry["state_dict"].items() if not k.startswith("head.")}
    partial = RobertaBundle.build_model(tiny_conf(), head=RobertaClassificationHead(3, 16),
                                        checkpoint=encoder_only, strict=True)
    close(partial.eval().encoder(entry["tokens"]), entry["features_no_grad"])
    assert "head.dense.weight" not in encoder_only  # the caller's dict is left as it was
    with pytest.raises(RuntimeError, match="Missing"):
        RobertaBundle.build_model(tiny_conf(), checkpoint={}, strict=True)
    with pytest.raises(TypeError, match="checkpoint"):
        RobertaBundle.build_model(tiny_conf(), checkpoint=3)
    # freezing, the download folder, no weights
    frozen = bundle.get_model(freeze_encoder=True, head=RobertaClassificationHead(3, 16))
    assert not any(p.requires_grad for p in frozen.encoder.parameters())
    assert all(p.requires_grad for p in frozen.head.parameters())
    moved = tmp_path / "elsewhere"
    os.makedirs(moved)
    os.replace(checkpoints / "xlmr.tiny.encoder.pt", moved / "xlmr.tiny.encoder.pt")
    elsewhere = bundle.get_model(dl_kwargs={"model_dir": str(moved)}).eval()
    close(elsewhere(entry["tokens"]), entry["features_no_grad"])
    local = RobertaBundle.build_model(tiny_conf(), checkpoint=str(moved / "xlmr.tiny.encoder.pt"))
    close(local.eval()(entry["tokens"]), entry["features_no_grad"])
    with caplog.at_level(logging.WARNING):
        untrained = bundle.get_model(load_weights=False, freeze_encoder=True)
    assert "freeze_encoder" in caplog.text and isinstance(untrained, RobertaModel)
    with pytest.raises(AssertionError, match="load_weights"):
        RobertaBundle(_encoder_conf=tiny_conf()).get_model()
    assert bundle.encoderConf == tiny_conf()


def test_offline_errors_say_where_to_put_the_files(tmp_path, monkeypatch):
    url = (tmp_path / "xlmr.missing.pt").as_uri()
    bundle = RobertaBundle(_path=url, _encoder_conf=tiny_conf())
    cache = tmp_path / "cache"
    with pytest.raises(RuntimeError, match=f"put the file at {cache}/xlmr.missing.pt"):
        bundle.get_model(dl_kwargs={"model_dir": str(cache), "progress": False})
    # the tokenizer files: embertext's cache folder
    monkeypatch.setattr(embertext.utils, "_CACHE_DIR", str(tmp_path / "text"))
    missing = (tmp_path / "spm.missing.model").as_uri()
    with pytest.raises(RuntimeError, match=f"put the file at {tmp_path}/text/spm.missing.model"):
        torchtext.transforms.SentencePieceTokenizer(missing)
