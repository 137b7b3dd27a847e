"""Unigram tokenizer.json files (Metaspace pre-tokenizer and decoder, SentencePiece's
precompiled normalizer) against Hugging Face `tokenizers`."""

import pytest

hf = pytest.importorskip("tokenizers")
pytest.importorskip("embertext")  # the interop session of CI has only ember

from test_text_tokenizers_hf import CORPUS, PROBES, assert_same  # noqa: E402

from embertext import tokenizers as ember_tokenizers  # noqa: E402


@pytest.fixture(scope="module", params=["always", "first", "never"])
def unigram_json(tmp_path_factory, request):
    tokenizer = hf.Tokenizer(hf.models.Unigram())
    tokenizer.pre_tokenizer = hf.pre_tokenizers.Metaspace(prepend_scheme=request.param)
    tokenizer.decoder = hf.decoders.Metaspace(prepend_scheme=request.param)
    trainer = hf.trainers.UnigramTrainer(vocab_size=300, special_tokens=["<unk>", "<s>"],
                                         unk_token="<unk>", show_progress=False)
    tokenizer.train_from_iterator(CORPUS, trainer)
    path = tmp_path_factory.mktemp("unigram") / "tokenizer.json"
    tokenizer.save(str(path))
    return str(path)


def test_unigram_metaspace_tokenizer_json(unigram_json):
    ours = ember_tokenizers.Tokenizer.from_file(unigram_json)
    theirs = hf.Tokenizer.from_file(unigram_json)
    for text in PROBES + ["<s>hello<s> world", "zzz qqq"]:
        a, b = ours.encode(text), theirs.encode(text)
        assert_same(a, b)
        assert ours.decode(a.ids) == theirs.decode(b.ids)
        assert ours.decode(a.ids, skip_special_tokens=False) == theirs.decode(
            b.ids, skip_special_tokens=False)
    again = ember_tokenizers.Tokenizer.from_str(ours.to_str())
    assert again.encode(PROBES[3]).ids == theirs.encode(PROBES[3]).ids
    assert_same(hf.Tokenizer.from_str(ours.to_str()).encode(PROBES[2]), ours.encode(PROBES[2]))


@pytest.mark.parametrize("byte_fallback", [False, True])
def test_sentencepiece_pieces_with_the_precompiled_normalizer(tmp_path, byte_fallback):
    spm = pytest.importorskip("sentencepiece")
    from embertext.tokenizers.sentencepiece import _parse_model

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(c for c in CORPUS if c.strip()) + "\n")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"),
                                   model_type="unigram", vocab_size=450 if byte_fallback else 150,
                                   hard_vocab_limit=False, byte_fallback=byte_fallback,
                                   character_coverage=0.98)
    pieces, _, normalizer = _parse_model(open(tmp_path / "m.model", "rb").read())
    vocab = [(piece, score) for piece, score, _ in pieces]
    unk = next(i for i, (_, _, kind) in enumerate(pieces) if kind == 2)
    tokenizers = []
    for lib in (ember_tokenizers, hf):
        tokenizer = lib.Tokenizer(lib.models.Unigram(vocab, unk_id=unk,
                                                     byte_fallback=byte_fallback))
        tokenizer.normalizer = lib.normalizers.Precompiled(normalizer[2])
        tokenizer.pre_tokenizer = lib.pre_tokenizers.Metaspace()
        tokenizer.decoder = lib.decoders.Metaspace()
        tokenizers.append(tokenizer)
    ours, theirs = tokenizers
    for text in PROBES + ["ＡＢＣ ① ﬁ ㍻ x\u00a0y", "未知の字 🙃"]:
        assert ours.normalizer.normalize_str(text) == theirs.normalizer.normalize_str(text)
        a, b = ours.encode(text), theirs.encode(text)
        assert_same(a, b)
        assert ours.decode(a.ids) == theirs.decode(b.ids)
