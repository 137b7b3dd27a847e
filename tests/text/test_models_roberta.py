"""torchtext's RoBERTa bundles' pieces that the recorded cases cannot reach (they download):
the XLM-R and RoBERTa transforms on files already in the caches."""

import base64
import gzip
import json

import ember
from embertext import utils
from embertext._download_hooks import load_state_dict_from_url
from embertext.models import XLMR_BASE_ENCODER, RobertaBundle, RobertaEncoderConf
from embertext.tokenizers.sentencepiece import SentencePieceProcessor

from ._torchtext_cases import RECORDING

FIXTURES = json.loads(gzip.decompress(RECORDING.read_bytes()))["fixtures"]


def fixture_bytes(name):
    return base64.b64decode(FIXTURES[name]["bytes"])


def test_xlmr_transform_from_the_caches(tmp_path, monkeypatch):
    monkeypatch.setattr(utils, "_CACHE_DIR", str(tmp_path / "text"))
    (tmp_path / "text").mkdir()
    model = fixture_bytes("spm_unigram")
    (tmp_path / "text" / "xlmr.sentencepiece.bpe.model").write_bytes(model)
    monkeypatch.setattr(ember.hub, "_hub_dir", str(tmp_path / "hub"))
    (tmp_path / "hub" / "checkpoints").mkdir(parents=True)
    (tmp_path / "hub" / "checkpoints" / "xlmr.vocab.pt").write_bytes(fixture_bytes("vocab_pt"))
    ids = XLMR_BASE_ENCODER.transform()(["the fox", "a b c"])
    pieces = SentencePieceProcessor(model_proto=model)
    vocab = load_state_dict_from_url(str(tmp_path / "hub" / "checkpoints" / "xlmr.vocab.pt"))
    # pieces -> ids (the unknown ones the default index, 0), between <s> (0) and </s> (2)
    expected = [[0, *vocab(pieces.EncodeAsPieces(t)), 2] for t in ["the fox", "a b c"]]
    assert ids == expected and any(i not in (0, 2) for i in expected[1])


def test_get_model_without_weights_and_freeze_warns(caplog):
    bundle = RobertaBundle(_encoder_conf=RobertaEncoderConf(
        vocab_size=20, embedding_dim=8, ffn_dimension=16, num_attention_heads=2,
        num_encoder_layers=1))
    with caplog.at_level("WARNING"):
        model = bundle.get_model(load_weights=False, freeze_encoder=True)
    assert "freeze_encoder" in caplog.text
    assert not any(p.requires_grad for p in model.encoder.parameters())


def test_roberta_transform_from_the_caches(tmp_path, monkeypatch):
    from embertext.models import ROBERTA_BASE_ENCODER
    from embertext.transforms import GPT2BPETokenizer

    from ._torchtext_cases import _gpt2_files

    monkeypatch.setattr(utils, "_CACHE_DIR", str(tmp_path / "text"))
    (tmp_path / "text").mkdir()
    _gpt2_files(str(tmp_path / "text"))
    (tmp_path / "text" / "encoder.json").rename(tmp_path / "text" / "gpt2_bpe_encoder.json")
    (tmp_path / "text" / "vocab.bpe").rename(tmp_path / "text" / "gpt2_bpe_vocab.bpe")
    monkeypatch.setattr(ember.hub, "_hub_dir", str(tmp_path / "hub"))
    (tmp_path / "hub" / "checkpoints").mkdir(parents=True)
    vocab_file = tmp_path / "hub" / "checkpoints" / "roberta.vocab.pt"
    vocab_file.write_bytes(fixture_bytes("vocab_pt"))
    ids = ROBERTA_BASE_ENCODER.transform()(["hello world", "a b"])
    bpe = GPT2BPETokenizer(str(tmp_path / "text" / "gpt2_bpe_encoder.json"),
                           str(tmp_path / "text" / "gpt2_bpe_vocab.bpe"))
    vocab = load_state_dict_from_url(str(vocab_file))
    # GPT-2 ids (as strings) -> the vocabulary's ids, between <s> (0) and </s> (2)
    assert ids == [[0, *vocab(bpe(t)), 2] for t in ["hello world", "a b"]]
