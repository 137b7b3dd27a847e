"""emberaudio.models.decoder: CTC beam search against brute force over every path, greedy
decoding, lexicon constraints, the language-model hook, lengths and errors."""

import itertools
import math

import numpy as np
import pytest

import ember
from emberaudio.models.decoder import CTCDecoderLM, CTCDecoderLMState, CTCHypothesis, ctc_decoder

TOKENS = ["-", "|", "a", "b"]


def _emissions(frames, seed, tokens=4, sharp=1.0):
    logits = np.random.default_rng(seed).standard_normal((frames, tokens)) * sharp
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


def _collapse(path, blank=0):
    return tuple(k for k, _ in itertools.groupby(path) if k != blank)


def _brute_force(lp):
    totals = {}
    for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
        score = sum(lp[t, k] for t, k in enumerate(path))
        label = _collapse(path)
        totals[label] = np.logaddexp(totals.get(label, -np.inf), score)
    return totals


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_log_add_beam_search_finds_the_most_probable_labelling(seed):
    lp = _emissions(5, seed)
    totals = _brute_force(lp)
    best = max(totals, key=totals.get)
    decoder = ctc_decoder(None, TOKENS, nbest=3, beam_size=1000, beam_threshold=1e9,
                          log_add=True)
    hyps = decoder(ember.from_numpy(lp[None].astype(np.float32)))[0]
    assert isinstance(hyps[0], CTCHypothesis) and len(hyps) == 3
    assert tuple(hyps[0].tokens.tolist()) == best
    assert math.isclose(hyps[0].score, totals[best], rel_tol=1e-5, abs_tol=1e-5)
    ranked = sorted(totals, key=totals.get, reverse=True)[:3]
    assert [tuple(h.tokens.tolist()) for h in hyps] == ranked
    assert hyps[0].words == []


def test_max_beam_search_scores_the_best_path():
    lp = _emissions(5, 3)
    best_path = {}
    for path in itertools.product(range(4), repeat=5):
        label = _collapse(path)
        best_path[label] = max(best_path.get(label, -np.inf),
                               sum(lp[t, k] for t, k in enumerate(path)))
    hyp = ctc_decoder(None, TOKENS, beam_size=1000, beam_threshold=1e9)(
        ember.from_numpy(lp[None]))[0][0]
    label = max(best_path, key=best_path.get)
    assert tuple(hyp.tokens.tolist()) == label
    assert math.isclose(hyp.score, best_path[label], rel_tol=1e-9)


def test_greedy_decoding_and_timesteps():
    # Peaked emissions along a path: "a a - a b b |" -> tokens a a b |, emitted at 0, 3, 4, 6
    path = [2, 2, 0, 2, 3, 3, 1]
    lp = np.full((7, 4), -8.0)
    lp[np.arange(7), path] = -0.01
    hyp = ctc_decoder(None, TOKENS, beam_size=1)(ember.from_numpy(lp[None]))[0][0]
    assert hyp.tokens.tolist() == [2, 2, 3, 1] and hyp.timesteps.tolist() == [0, 3, 4, 6]
    assert ctc_decoder(None, TOKENS).idxs_to_tokens(hyp.tokens) == ["a", "a", "b", "|"]
    # beam 1 follows the frame-wise argmax on random emissions
    for seed in range(5):
        lp = _emissions(12, seed, sharp=3.0)
        hyp = ctc_decoder(None, TOKENS, beam_size=1)(ember.from_numpy(lp[None]))[0][0]
        assert tuple(hyp.tokens.tolist()) == _collapse(lp.argmax(-1))


def test_lengths_and_errors():
    lp = np.full((2, 6, 4), -8.0)
    lp[:, :, 2] = -0.01
    lp[1, 3:, 0] = -0.001
    lp[1, 3:, 2] = -9.0
    out = ctc_decoder(None, TOKENS)(ember.from_numpy(lp), ember.tensor([6, 2]))
    assert [h[0].tokens.tolist() for h in out] == [[2], [2]]
    assert ctc_decoder(None, TOKENS)(ember.from_numpy(lp[:, :0]))[0][0].tokens.tolist() == []
    decoder = ctc_decoder(None, TOKENS)
    with pytest.raises(ValueError, match="tokens"):
        decoder(ember.zeros(1, 3, 5))
    with pytest.raises(ValueError, match="batch"):
        decoder(ember.zeros(3, 4))
    with pytest.raises(ValueError, match="blank_token"):
        ctc_decoder(None, ["a", "|"])
    with pytest.raises(ValueError, match="KenLM"):
        ctc_decoder(None, TOKENS, lm="lm.bin")


def _spell(word_path, frames_per_token=2):
    """Emissions that favour ``word_path`` (token indices) with some noise."""
    lp = np.full((len(word_path) * frames_per_token, 4), -3.0)
    for i, token in enumerate(word_path):
        lp[i * frames_per_token, token] = -0.1
        lp[i * frames_per_token + 1, 0] = -0.1
    return lp - np.log(np.exp(lp).sum(-1, keepdims=True))


def test_lexicon_constrains_the_words(tmp_path):
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_text("ab a b |\nba b a |\nbb b b |\n")
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("\n".join(TOKENS) + "\n")
    # The acoustics say "a a |" (not a word): the lexicon rules that spelling out.
    lp = _spell([2, 2, 1])
    free = ctc_decoder(None, str(tokens))(ember.from_numpy(lp[None]))[0][0]
    assert free.tokens.tolist() == [2, 2, 1]
    constrained = ctc_decoder(str(lexicon), str(tokens), beam_size=50)(
        ember.from_numpy(lp[None]))[0][0]
    spelled = {"ab": [2, 3, 1], "ba": [3, 2, 1], "bb": [3, 3, 1]}
    assert constrained.tokens.tolist() != [2, 2, 1]
    assert all(w in spelled for w in constrained.words)
    assert constrained.tokens.tolist() in ([1], *spelled.values())
    two = ctc_decoder(str(lexicon), TOKENS, nbest=2)(
        ember.from_numpy(_spell([2, 3, 1, 3, 2, 1])[None]))[0]
    assert two[0].words == ["ab", "ba"] and two[0].tokens.tolist() == [2, 3, 1, 3, 2, 1]
    assert two[0].score >= two[1].score
    # An unknown word is allowed when unk_score is finite.
    unk = ctc_decoder(str(lexicon), TOKENS, unk_score=0.0)(ember.from_numpy(lp[None]))[0][0]
    assert unk.words == ["<unk>"] and unk.tokens.tolist() == [2, 2, 1]


class _FavourWord(CTCDecoderLM):
    """Scores one word index high, every other low; records the calls."""

    def __init__(self, favoured):
        self.favoured = favoured
        self.calls = []

    def start(self, start_with_nothing):
        return CTCDecoderLMState()

    def score(self, state, usr_token_idx):
        self.calls.append(usr_token_idx)
        return state.child(usr_token_idx), (0.0 if usr_token_idx == self.favoured else -5.0)

    def finish(self, state):
        return state, 0.0


def test_language_model_hook(tmp_path):
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_text("ab a b |\nba b a |\n")
    lp = _spell([2, 3, 1])                       # acoustically "ab"
    plain = ctc_decoder(str(lexicon), TOKENS)(ember.from_numpy(lp[None]))[0][0]
    assert plain.words == ["ab"]
    lm = _FavourWord(favoured=1)                 # word 1 is "ba"
    steered = ctc_decoder(str(lexicon), TOKENS, lm=lm, lm_weight=2.0)(
        ember.from_numpy(lp[None]))[0][0]
    assert steered.words == ["ba"] and set(lm.calls) <= {0, 1}
    # Without a lexicon the LM sees token indices.
    lm = _FavourWord(favoured=3)
    ctc_decoder(None, TOKENS, lm=lm)(ember.from_numpy(lp[None]))
    assert set(lm.calls) <= {1, 2, 3} and 3 in lm.calls
    state = CTCDecoderLMState()
    assert state.child(4) is state.child(4) and state.compare(state) == 0
    with pytest.raises(TypeError):
        CTCDecoderLM()
