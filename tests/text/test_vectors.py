"""embertext.vocab.Vectors and GloVe / CharNGram on small vector files."""

import gzip
import zipfile

import numpy as np
import pytest

import ember
from embertext.vocab import CharNGram, GloVe, Vectors, pretrained_aliases


def write_vectors(path, rows, header=None, opener=open):
    with opener(path, "wt", encoding="utf-8") as f:
        if header:
            f.write(header + "\n")
        for word, values in rows:
            f.write(word + " " + " ".join(repr(v) for v in values) + "\n")


ROWS = [("the", [0.1, 0.2, 0.3]), ("Cat", [1.0, -2.0, 3.5]), ("a\u00a0b", [0.0, 0.0, 1.0])]


def test_vectors_read_cache_and_lookup(tmp_path):
    path = tmp_path / "vec.txt"
    write_vectors(path, ROWS, header="3 3")
    vectors = Vectors(str(path), cache=str(tmp_path / "cache"))
    assert vectors.itos == ["the", "Cat", "a\u00a0b"] and vectors.dim == 3 and len(vectors) == 3
    assert vectors.vectors.dtype == ember.float32
    np.testing.assert_array_equal(vectors["Cat"].numpy(), np.float32([1.0, -2.0, 3.5]))
    np.testing.assert_array_equal(vectors["nope"].numpy(), np.zeros(3, np.float32))
    assert "a\u00a0b" in vectors  # split on " " only
    got = vectors.get_vecs_by_tokens(["cat", "the"], lower_case_backup=False)
    np.testing.assert_array_equal(got.numpy(), np.float32([[0, 0, 0], [0.1, 0.2, 0.3]]))
    assert tuple(vectors.get_vecs_by_tokens("the").shape) == (3,)
    # The .pt cache is used the second time, even with the text file gone.
    assert (tmp_path / "cache" / "vec.txt.pt").exists()
    path.unlink()
    again = Vectors("vec.txt", cache=str(tmp_path / "cache"))
    np.testing.assert_array_equal(again.vectors.numpy(), vectors.vectors.numpy())


def test_max_vectors_unk_init_gz_and_errors(tmp_path):
    path = tmp_path / "vec.txt.gz"
    write_vectors(path, ROWS, opener=gzip.open)
    vectors = Vectors(str(path), cache=str(tmp_path), max_vectors=2,
                      unk_init=lambda t: t.fill_(7.0))
    assert vectors.itos == ["the", "Cat"]
    assert vectors["zzz"].tolist() == [7.0, 7.0, 7.0]
    assert (tmp_path / "vec.txt.gz_2.pt").exists()
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2 3\nb 1 2\n")
    with pytest.raises(RuntimeError, match="has 2 dimensions"):
        Vectors(str(bad), cache=str(tmp_path))
    with pytest.raises(RuntimeError, match="no vectors found"):
        Vectors("missing.txt", cache=str(tmp_path))


def test_glove_downloads_and_extracts(tmp_path, monkeypatch):
    text = tmp_path / "glove.6B.3d.txt"
    write_vectors(text, ROWS)
    archive = tmp_path / "glove.6B.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(text, "glove.6B.3d.txt")
    text.unlink()
    monkeypatch.setitem(GloVe.url, "6B", archive.as_uri())
    glove = GloVe(name="6B", dim=3, cache=str(tmp_path / "cache"))
    assert glove.itos[:2] == ["the", "Cat"]
    assert set(pretrained_aliases) >= {"glove.6B.50d", "fasttext.en.300d", "charngram.100d"}


def test_char_ngram_averages_ngrams(tmp_path, monkeypatch):
    path = tmp_path / "charNgram.txt"
    # (Vectors of two numbers would be taken for a header, as in torchtext.)
    write_vectors(path, [("2gram-#BEGIN#a", [1.0, 0.0, 0.0]), ("2gram-ab", [0.0, 2.0, 0.0]),
                         ("3gram-ab#END#", [3.0, 3.0, 3.0])])
    monkeypatch.setattr(CharNGram, "name", str(path))
    vectors = CharNGram(cache=str(tmp_path / "cache"))
    np.testing.assert_allclose(vectors["ab"].numpy(), [[4 / 3, 5 / 3, 1.0]], rtol=1e-6)
    assert vectors["zz"].tolist() == [[0.0, 0.0, 0.0]]
    assert vectors["<unk>"].tolist() == [[0.0, 0.0, 0.0]]
