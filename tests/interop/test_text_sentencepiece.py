"""embertext's SentencePiece helpers against the sentencepiece package they wrap."""

import pytest

spm = pytest.importorskip("sentencepiece")

from embertext.data.functional import (  # noqa: E402
    generate_sp_model,
    load_sp_model,
    sentencepiece_numericalizer,
    sentencepiece_tokenizer,
)
from embertext.transforms import SentencePieceTokenizer  # noqa: E402

LINES = ["the quick brown fox jumps over the lazy dog", "pack my box with five dozen jugs",
         "how vexingly quick daft zebras jump", "sphinx of black quartz judge my vow"] * 20


@pytest.fixture(scope="module")
def model_prefix(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spm")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(LINES) + "\n")
    prefix = str(folder / "m_user")
    generate_sp_model(str(corpus), vocab_size=60, model_type="bpe", model_prefix=prefix)
    return prefix


def test_generated_model_encodes_like_sentencepiece(model_prefix):
    reference = spm.SentencePieceProcessor(model_file=model_prefix + ".model")
    sp_model = load_sp_model(model_prefix + ".model")
    with open(model_prefix + ".model", "rb") as f:
        from_file = load_sp_model(f)
    text = ["the lazy zebras", "quick  jugs!"]
    expected_ids = [reference.EncodeAsIds(t) for t in text]
    expected_pieces = [reference.EncodeAsPieces(t) for t in text]
    assert list(sentencepiece_numericalizer(sp_model)(text)) == expected_ids
    assert list(sentencepiece_tokenizer(from_file)(text)) == expected_pieces
    transform = SentencePieceTokenizer(model_prefix + ".model")
    assert transform(text) == expected_pieces
    assert transform(text[0]) == expected_pieces[0]
    with pytest.raises(TypeError):
        transform(3)


def test_load_sp_model_refuses_other_types():
    with pytest.raises(TypeError, match="Unsupported type for spm argument: int"):
        load_sp_model(3)
