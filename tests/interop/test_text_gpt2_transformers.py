"""embertext.models.gpt2 against Hugging Face `transformers`: logits, the key / value cache and
greedy generation."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("embertext")  # the interop session of CI has only ember
transformers = pytest.importorskip("transformers")

import ember  # noqa: E402
from embertext.models import GPT2LMHeadModel, GPT2Model  # noqa: E402

CONFIG = dict(vocab_size=97, n_embd=32, n_layer=2, n_head=4, n_positions=48, bos_token_id=96,
              eos_token_id=96, pad_token_id=96)


@pytest.fixture(scope="module", params=["safetensors", "bin"])
def saved(tmp_path_factory, request):
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(**CONFIG)).eval()
    path = tmp_path_factory.mktemp("gpt2")
    model.save_pretrained(str(path), safe_serialization=request.param == "safetensors")
    return model, str(path)


@ember.no_grad()
def test_logits_and_hidden_states(saved):
    reference, path = saved
    ours = GPT2LMHeadModel.from_pretrained(path)
    ids = np.random.default_rng(0).integers(0, 96, (3, 9))
    with torch.no_grad():
        expected = reference(torch.tensor(ids), output_hidden_states=True)
    got = ours(ember.tensor(ids))
    np.testing.assert_allclose(got.logits.numpy(), expected.logits.numpy(), rtol=1e-4,
                               atol=1e-5)
    hidden = GPT2Model  # the decoder alone loads from the same checkpoint's weights
    assert isinstance(ours.transformer, hidden)
    np.testing.assert_allclose(ours.transformer(ember.tensor(ids)).last_hidden_state.numpy(),
                               expected.hidden_states[-1].numpy(), rtol=1e-4, atol=1e-5)


@ember.no_grad()
def test_cache_gives_the_logits_of_the_whole_sequence(saved):
    _, path = saved
    ours = GPT2LMHeadModel.from_pretrained(path)
    ids = ember.tensor(np.random.default_rng(1).integers(0, 96, (2, 10)))
    full = ours(ids).logits
    first = ours(ids[:, :6])
    rest = ours(ids[:, 6:], past_key_values=first.past_key_values)
    np.testing.assert_allclose(rest.logits.numpy(), full[:, 6:].numpy(), rtol=1e-4, atol=1e-5)


def test_greedy_generation_gives_the_same_tokens(saved):
    reference, path = saved
    ours = GPT2LMHeadModel.from_pretrained(path)
    prompt = np.random.default_rng(2).integers(0, 96, (2, 5))
    with torch.no_grad():
        expected = reference.generate(torch.tensor(prompt), max_new_tokens=12, do_sample=False,
                                      attention_mask=torch.ones(2, 5, dtype=torch.long))
    got = ours.generate(ember.tensor(prompt), max_new_tokens=12, eos_token_id=96)
    assert got.tolist() == expected.tolist()


@ember.no_grad()
def test_padding_mask(saved):
    reference, path = saved
    ours = GPT2LMHeadModel.from_pretrained(path)
    ids = np.array([[96, 96, 5, 6, 7], [1, 2, 3, 4, 5]])
    mask = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    position_ids = np.clip(mask.cumsum(1) - 1, 0, None)
    with torch.no_grad():
        expected = reference(torch.tensor(ids), attention_mask=torch.tensor(mask),
                             position_ids=torch.tensor(position_ids)).logits
    got = ours(ember.tensor(ids), attention_mask=ember.tensor(mask)).logits
    np.testing.assert_allclose(got.numpy()[:, 2:], expected.numpy()[:, 2:], rtol=1e-4,
                               atol=1e-5)
