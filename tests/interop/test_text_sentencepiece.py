"""embertext's SentencePiece helpers against the sentencepiece package they wrap."""

import pytest

spm = pytest.importorskip("sentencepiece")
pytest.importorskip("embertext")  # the interop session of CI has only ember

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


MULTILINGUAL = [
    "Hello world! How are you doing today?", "The café served crème brûlée; naïve coöperation.",
    "中文字符和日本語のテキスト、한국어 문장도 있습니다。", "Emoji 😀😃 and flags 🇫🇷 👩‍💻.",
    "  leading and trailing spaces  ", "tabs\tand\nnewlines   runs", "Numbers 123 ２２ ①  ½ Ⅻ",
    "Full-width ＡＢＣ and ﬁ ligatures", "Ελληνικά και Русский текст.", "عربى نص ١٢٣",
]


@pytest.fixture(scope="module", params=[{}, {"byte_fallback": True, "vocab_size": 400},
                                        {"normalization_rule_name": "identity"}],
                ids=["nmt_nfkc", "byte_fallback", "identity"])
def unigram_model(tmp_path_factory, request):
    folder = tmp_path_factory.mktemp("unigram")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(MULTILINGUAL * 10 + LINES) + "\n")
    options = {"vocab_size": 150, "hard_vocab_limit": False, **request.param}
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / "m"),
                                   model_type="unigram", character_coverage=0.98, **options)
    return str(folder / "m.model")


def test_embertext_reader_encodes_like_sentencepiece(unigram_model):
    import random

    from embertext.tokenizers.sentencepiece import SentencePieceProcessor

    reference = spm.SentencePieceProcessor(model_file=unigram_model)
    ours = SentencePieceProcessor(model_file=unigram_model)
    rng = random.Random(0)
    chars = list("abc ABC ！？ｱｲ①ﬁ㍻Ⅻ½éü\u0301\u00a0\u3000\t中文😀") + ["\u200b", "\x00"]
    texts = MULTILINGUAL + ["", "   ", "zzz 未知"] + [
        "".join(rng.choice(chars) for _ in range(rng.randint(0, 12))) for _ in range(300)]
    for text in texts:
        ids = reference.EncodeAsIds(text)
        assert ours.EncodeAsIds(text) == ids, text
        assert ours.EncodeAsPieces(text) == reference.EncodeAsPieces(text), text
        assert ours.DecodeIds(ids) == reference.DecodeIds(ids), text
        pieces = reference.EncodeAsPieces(text)
        assert ours.DecodePieces(pieces) == reference.DecodePieces(pieces), text
    # pieces the model lacks stay as they are; control pieces go, <unk> is " ⁇ "
    odd = ["▁zzz", "<s>", "Q\u2581", "<unk>", "</s>", "▁"]
    assert ours.DecodePieces(odd) == reference.DecodePieces(odd)
    assert ours.GetPieceSize() == reference.GetPieceSize()
