"""embertext's T5 against Hugging Face `transformers` on tiny random checkpoints (the ReLU T5
and the gated-GELU T5 v1.1 / Flan-T5 feed-forward): encoder states, decoder states, logits,
the loss, the key / value cache and greedy generation; and torchtext's layout built from the
same checkpoint."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("embertext")  # the interop session of CI has only ember
transformers = pytest.importorskip("transformers")

import ember  # noqa: E402
from embertext.models import T5Bundle, T5EncoderModel, T5ForConditionalGeneration  # noqa: E402
from embertext.models.t5.modeling_t5 import T5Model  # noqa: E402

TOL = dict(rtol=1e-4, atol=5e-5)
# num_decoder_layers below num_layers: transformers sizes its generation cache by num_layers.
CONFIG = dict(vocab_size=61, d_model=32, d_kv=8, d_ff=48, num_layers=3, num_decoder_layers=2,
              num_heads=4, relative_attention_num_buckets=8, relative_attention_max_distance=20,
              decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)


@pytest.fixture(scope="module", params=[("relu", True), ("gated-gelu", True),
                                        ("gated-gelu", False)],
                ids=["relu", "gated-gelu", "gated-gelu-untied"])
def saved(tmp_path_factory, request):
    feed_forward_proj, tie = request.param
    torch.manual_seed(0)
    config = transformers.T5Config(feed_forward_proj=feed_forward_proj, tie_word_embeddings=tie,
                                   **CONFIG)
    model = transformers.T5ForConditionalGeneration(config).eval()
    with torch.no_grad():  # transformers' initialization makes greedy search emit padding only
        for name, parameter in model.named_parameters():
            if "layer_norm" not in name:
                parameter.normal_(0.0, 0.2)
    path = tmp_path_factory.mktemp("t5")
    model.save_pretrained(str(path))
    return model, str(path)


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(2, 61, (3, 11))  # longer than max_exact: the logarithmic buckets
    mask = np.ones_like(ids)
    mask[1, 8:] = 0  # right padding
    mask[2, :3] = 0  # left padding
    decoder = rng.integers(2, 61, (3, 7))
    decoder[:, 0] = 0
    return ids, mask, decoder


@ember.no_grad()
def test_hidden_states_and_logits(saved):
    reference, path = saved
    ours = T5ForConditionalGeneration.from_pretrained(path)
    ids, mask, decoder = _inputs()
    with torch.no_grad():
        expected = reference(torch.tensor(ids), attention_mask=torch.tensor(mask),
                             decoder_input_ids=torch.tensor(decoder), output_hidden_states=True)
    got = ours(ember.tensor(ids), attention_mask=ember.tensor(mask),
               decoder_input_ids=ember.tensor(decoder), output_hidden_states=True)
    np.testing.assert_allclose(got.encoder_last_hidden_state.numpy(),
                               expected.encoder_last_hidden_state.numpy(), **TOL)
    np.testing.assert_allclose(got.logits.numpy(), expected.logits.numpy(), **TOL)
    for mine, theirs in zip(got.decoder_hidden_states[:-1], expected.decoder_hidden_states):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), **TOL)


@ember.no_grad()
def test_encoder_and_base_model(saved):
    reference, path = saved
    ids, mask, decoder = _inputs(1)
    with torch.no_grad():
        encoded = reference.encoder(input_ids=torch.tensor(ids),
                                    attention_mask=torch.tensor(mask)).last_hidden_state
        decoded = reference.decoder(input_ids=torch.tensor(decoder),
                                    encoder_hidden_states=encoded,
                                    encoder_attention_mask=torch.tensor(mask)).last_hidden_state
    encoder = T5EncoderModel.from_pretrained(path)
    got = encoder(ember.tensor(ids), attention_mask=ember.tensor(mask)).last_hidden_state
    np.testing.assert_allclose(got.numpy(), encoded.numpy(), **TOL)
    base = T5Model.from_pretrained(path)
    out = base(ember.tensor(ids), attention_mask=ember.tensor(mask),
               decoder_input_ids=ember.tensor(decoder))
    np.testing.assert_allclose(out.last_hidden_state.numpy(), decoded.numpy(), **TOL)


def test_loss_with_ignored_labels(saved):
    reference, path = saved
    ours = T5ForConditionalGeneration.from_pretrained(path)
    ids, mask, _ = _inputs(2)
    labels = np.random.default_rng(3).integers(2, 61, (3, 6))
    labels[0, 4:] = -100
    with torch.no_grad():
        expected = reference(torch.tensor(ids), attention_mask=torch.tensor(mask),
                             labels=torch.tensor(labels)).loss
    got = ours(ember.tensor(ids), attention_mask=ember.tensor(mask), labels=ember.tensor(labels))
    np.testing.assert_allclose(got.loss.item(), expected.item(), rtol=1e-5)


@ember.no_grad()
def test_cache_matches_the_reference_step_by_step(saved):
    reference, path = saved
    ours = T5ForConditionalGeneration.from_pretrained(path)
    ids, mask, decoder = _inputs(4)
    with torch.no_grad():
        expected = reference(torch.tensor(ids), attention_mask=torch.tensor(mask),
                             decoder_input_ids=torch.tensor(decoder)).logits
    first = ours(ember.tensor(ids), attention_mask=ember.tensor(mask),
                 decoder_input_ids=ember.tensor(decoder[:, :4]), use_cache=True)
    rest = ours(ember.tensor(ids), attention_mask=ember.tensor(mask),
                decoder_input_ids=ember.tensor(decoder[:, 4:]),
                past_key_values=first.past_key_values)
    np.testing.assert_allclose(rest.logits.numpy(), expected[:, 4:].numpy(), **TOL)


def test_greedy_generation_gives_the_same_tokens(saved):
    reference, path = saved
    ours = T5ForConditionalGeneration.from_pretrained(path)
    ids, mask, _ = _inputs(5)
    with torch.no_grad():
        expected = reference.generate(torch.tensor(ids), attention_mask=torch.tensor(mask),
                                      max_new_tokens=9, do_sample=False)
    got = ours.generate(ember.tensor(ids), attention_mask=ember.tensor(mask), max_new_tokens=9)
    assert got.tolist() == expected.tolist()
    assert len(set(got[:, 1:].flatten().tolist())) > 2  # not a constant continuation


@ember.no_grad()
def test_torchtext_layout_from_the_huggingface_checkpoint(saved):
    reference, path = saved
    model = T5Bundle.build_model_from_huggingface_ckpt(path).eval()
    ids, _, decoder = _inputs(6)
    with torch.no_grad():
        expected = reference(torch.tensor(ids), decoder_input_ids=torch.tensor(decoder))
    got = model(ember.tensor(ids), ember.tensor(decoder))
    np.testing.assert_allclose(got["encoder_output"].numpy(),
                               expected.encoder_last_hidden_state.numpy(), **TOL)
    logits = expected.logits.numpy()
    if not reference.config.scale_decoder_outputs:
        logits = logits * CONFIG["d_model"] ** -0.5  # torchtext scales before lm_head always
    np.testing.assert_allclose(got["decoder_output"].numpy(), logits, **TOL)
    encoder = T5Bundle.build_model_from_huggingface_ckpt(path, encoder_only=True)
    np.testing.assert_allclose(encoder(ember.tensor(ids))["encoder_output"].numpy(),
                               expected.encoder_last_hidden_state.numpy(), **TOL)
