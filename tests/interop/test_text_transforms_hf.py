"""The torchtext-style GPT-2 and BERT tokenizer transforms against Hugging Face
`tokenizers` reading the same vocabulary files."""

import pytest

hf = pytest.importorskip("tokenizers")
pytest.importorskip("embertext")  # the interop session of CI has only ember

from test_text_tokenizers_hf import CORPUS, PROBES, bert_wordpiece, byte_level_bpe  # noqa: E402

from embertext.transforms import BERTTokenizer, GPT2BPETokenizer  # noqa: E402


def test_gpt2_bpe_tokenizer_gives_hugging_faces_ids(tmp_path):
    trained = byte_level_bpe(hf, vocab_size=600)
    vocab, merges = trained.model.save(str(tmp_path))
    reference = hf.Tokenizer(hf.models.BPE.from_file(vocab, merges))
    reference.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=False)
    reference.decoder = hf.decoders.ByteLevel()
    ours = GPT2BPETokenizer(vocab, merges)
    tokens = GPT2BPETokenizer(vocab, merges, return_tokens=True)
    for text in PROBES:
        expected = reference.encode(text)
        assert ours(text) == [str(i) for i in expected.ids]
        assert tokens(text) == expected.tokens
        assert ours.decode(ours(text)) == reference.decode(expected.ids) == text
    assert ours(CORPUS[:3]) == [[str(i) for i in e.ids] for e in
                                reference.encode_batch(CORPUS[:3])]


@pytest.mark.parametrize("lowercase", [True, False])
def test_bert_tokenizer_gives_hugging_faces_tokens(tmp_path, lowercase):
    (vocab,) = bert_wordpiece(hf, vocab_size=400).model.save(str(tmp_path))
    reference = hf.Tokenizer(hf.models.WordPiece.from_file(vocab))
    reference.normalizer = hf.normalizers.BertNormalizer(lowercase=lowercase)
    reference.pre_tokenizer = hf.pre_tokenizers.BertPreTokenizer()
    ours = BERTTokenizer(vocab, do_lower_case=lowercase)
    tokens = BERTTokenizer(vocab, do_lower_case=lowercase, return_tokens=True)
    for text in PROBES:
        expected = reference.encode(text)
        assert tokens(text) == expected.tokens
        assert ours(text) == [str(i) for i in expected.ids]
