"""embertext.models.gpt2 without transformers: cache, generation and sampling filters."""

import numpy as np
import pytest

import ember
from embertext.models import GPT2Config, GPT2LMHeadModel

CONFIG = GPT2Config(vocab_size=40, n_embd=16, n_layer=2, n_head=2, n_positions=30)


def model():
    ember.manual_seed(0)
    return GPT2LMHeadModel(CONFIG).eval()


def test_greedy_equals_argmax_of_full_forward():
    m = model()
    prompt = ember.tensor([[3, 4, 5]])
    out = m.generate(prompt, max_new_tokens=5)
    assert out.shape == (1, 8) and out[:, :3].tolist() == [[3, 4, 5]]
    with ember.no_grad():
        for step in range(3, 8):
            assert m(out[:, :step]).logits[0, -1].argmax().item() == out[0, step].item()


def test_sampling_filters():
    m = model()
    prompt = ember.tensor([[1, 2], [3, 4]])
    greedy = m.generate(prompt, max_new_tokens=4)
    # top_k=1 and a tiny top_p leave one token: sampling is greedy.
    for options in ({"top_k": 1}, {"top_p": 1e-6}):
        sampled = m.generate(prompt, max_new_tokens=4, do_sample=True,
                             generator=ember.Generator().manual_seed(1), **options)
        assert sampled.tolist() == greedy.tolist()
    a = m.generate(prompt, max_new_tokens=6, do_sample=True, top_k=10, top_p=0.9,
                   generator=ember.Generator().manual_seed(3))
    b = m.generate(prompt, max_new_tokens=6, do_sample=True, top_k=10, top_p=0.9,
                   generator=ember.Generator().manual_seed(3))
    assert a.tolist() == b.tolist()
    with pytest.raises(ValueError, match="top_p"):
        m.generate(prompt, do_sample=True, top_p=0.0)
    with pytest.raises(ValueError, match="temperature"):
        m.generate(prompt, temperature=0)


def test_eos_stops_and_pads():
    m = model()
    prompt = ember.tensor([[1, 2]])
    first = m.generate(prompt, max_new_tokens=1)[0, -1].item()
    out = m.generate(prompt, max_new_tokens=5, eos_token_id=first)
    assert out.tolist() == [[1, 2, first]]


@ember.no_grad()
def test_positions_and_loss():
    m = model()
    with pytest.raises(ValueError, match="n_positions"):
        m(ember.zeros(1, 31, dtype=ember.long))
    ids = ember.tensor([[1, 2, 3, 4]])
    out = m(ids, labels=ids)
    logits = out.logits[0, :-1].numpy().astype(np.float64)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -np.mean([log_probs[i, t] for i, t in enumerate([2, 3, 4])])
    assert out.loss.item() == pytest.approx(expected, rel=1e-5)
    assert m.lm_head.weight is m.transformer.wte.weight
