"""The behaviour cases of _torchtext_cases.py through embertext: each gives what torchtext 0.18
gave (recorded by tools/record_torchtext.py) — the same values, tensors of the same dtype and
shape with values within float32 rounding, or an exception of the same type."""

import base64
import gzip
import json
import math

import pytest

import ember
import embertext

from ._torchtext_cases import CASES, RECORDING, run_case

RECORD = json.loads(gzip.decompress(RECORDING.read_bytes()))
FIXTURES = {name: base64.b64decode(value["bytes"]) for name, value in RECORD["fixtures"].items()}

# Cases whose torchtext result embertext does not reproduce on purpose, each with its reason.
DIFFERENT = {
}
# Gaps not closed yet (strict: an entry fails once the gap is closed, and must go).
GAPS = {}
# Cases that need an optional dependency of embertext: training SentencePiece models is the
# sentencepiece package's work (the extra "sentencepiece"); reading them needs nothing.
NEEDS = {"generate_sp_model_pieces": "sentencepiece"}


def assert_same(got, expected, where="result"):
    if isinstance(expected, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{where}: {got!r}"
        assert math.isclose(got, expected, rel_tol=1e-5, abs_tol=1e-6) or (
            math.isnan(got) and math.isnan(expected)), f"{where}: {got!r} != {expected!r}"
    elif isinstance(expected, dict):
        assert isinstance(got, dict), f"{where}: {got!r} is not {expected!r}"
        assert sorted(got) == sorted(expected), f"{where}: keys {sorted(got)} != " \
            f"{sorted(expected)}"
        for key in expected:
            assert_same(got[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, list):
        assert isinstance(got, list), f"{where}: {got!r} is not {expected!r}"
        assert len(got) == len(expected), f"{where}: length {len(got)} != {len(expected)}: " \
            f"{got!r} != {expected!r}"
        for i, (a, b) in enumerate(zip(got, expected)):
            assert_same(a, b, f"{where}[{i}]")
    else:
        assert got == expected and type(got) is type(expected), \
            f"{where}: {got!r} != {expected!r}"


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=[pytest.mark.xfail(reason=GAPS[name], strict=True)]
                 if name in GAPS else []) for name in sorted(RECORD["cases"])])
def test_case(name, tmp_path):
    if name in DIFFERENT:
        pytest.skip(DIFFERENT[name])
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    expected = RECORD["cases"][name]
    got = run_case(CASES[name], embertext, ember, str(tmp_path), FIXTURES)
    if "raises" in expected:
        assert got == expected, f"torchtext raises {expected['raises']}, embertext gives {got}"
    else:
        assert "raises" not in got, f"embertext raises {got['raises']}"
        assert_same(got["value"], expected["value"])


def test_every_case_is_recorded():
    assert sorted(CASES) == sorted(RECORD["cases"])


@pytest.mark.parametrize(("name", "default"), [("vocab_pt", 0), ("vocab_pt_no_default", None)])
def test_load_torchtext_vocab(name, default, tmp_path):
    """A torchtext Vocab saved by torch.save (what the RoBERTa bundles' transforms download)
    reads into embertext's Vocab: its tokens in order and its default index."""
    from embertext._download_hooks import load_state_dict_from_url

    from ._torchtext_cases import TOKENS

    path = tmp_path / "vocab.pt"
    path.write_bytes(FIXTURES[name])
    vocab = load_state_dict_from_url(str(path))
    specials = ["<unk>"] if default is not None else []
    expected = embertext.vocab.build_vocab_from_iterator(TOKENS, specials=specials)
    assert vocab.get_itos() == expected.get_itos()
    assert vocab.get_default_index() == default
