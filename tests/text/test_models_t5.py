"""embertext's T5 without a reference library: the Hugging Face layout
(embertext.models.t5.modeling_t5) and torchtext's (T5Conf, T5Model, T5Bundle) on tiny random
models — shapes, the RMS norm and the relative position buckets against NumPy, the cache,
the loss, a training step, generation, loading from folders and from the checkpoint cache
the tests write, and the offline error. Numbers against `transformers` are in
tests/interop/test_text_t5_transformers.py."""

import json
import logging
import math
import os

import numpy as np
import pytest

import ember
import embertext.utils
from embertext.models import (
    FLAN_T5_BASE_GENERATION,
    T5_BASE,
    T5_BASE_ENCODER,
    T5_LARGE_GENERATION,
    T5_SMALL,
    T5_SMALL_ENCODER,
    T5_SMALL_GENERATION,
    T5Bundle,
    T5Conf,
    T5Config,
    T5EncoderModel,
    T5ForConditionalGeneration,
    T5Model,
    T5Transform,
)
from embertext.models import t5 as t5_package
from embertext.models.t5 import modeling_t5
from embertext.models.t5.modules import T5LayerNorm, relative_position_bucket

from .test_sentencepiece_reader import PIECES, model_bytes

HF = dict(vocab_size=37, d_model=16, d_kv=4, d_ff=24, num_layers=2, num_decoder_layers=3,
          num_heads=4, relative_attention_num_buckets=8, relative_attention_max_distance=16,
          dropout_rate=0.0)
TT = dict(embedding_dim=16, qkv_dim=4, num_attention_heads=4, num_encoder_layers=2,
          num_decoder_layers=3, ffn_dimension=24, vocab_size=37,
          relative_attention_num_buckets=8, relative_attention_max_distance=16)


def hf_model(cls=T5ForConditionalGeneration, seed=0, **overrides):
    ember.manual_seed(seed)
    model = cls(T5Config(**{**HF, **overrides})).eval()
    with ember.no_grad():  # wider weights than the default: varied greedy tokens
        for name, parameter in model.named_parameters():
            if "layer_norm" not in name:
                parameter.normal_(0.0, 0.3)
    return model


def tt_model(seed=0, **overrides):
    ember.manual_seed(seed)
    return T5Model(T5Conf(**{**TT, **overrides})).eval()


def ids(seed, shape, low=2):
    return ember.tensor(np.random.default_rng(seed).integers(low, 37, shape))


# -- the pieces against NumPy --------------------------------------------------------------

def _bucket_numpy(relative, bidirectional, num_buckets, max_distance):
    out = np.zeros_like(relative)
    n = num_buckets
    if bidirectional:
        n //= 2
        out += (relative > 0) * n
        distance = np.abs(relative)
    else:
        distance = -np.minimum(relative, 0)
    exact = n // 2
    result = np.empty_like(distance)
    for index, d in np.ndenumerate(distance):
        if d < exact:
            result[index] = d
        else:
            large = exact + int(np.float32(math.log(d / exact) / math.log(max_distance / exact)
                                           * (n - exact)))
            result[index] = min(large, n - 1)
    return out + result


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", [(32, 128), (8, 16), (10, 40)])
def test_relative_position_bucket_matches_numpy(bidirectional, num_buckets, max_distance):
    relative = np.arange(-300, 301)[None, :] - np.arange(3)[:, None]
    got = relative_position_bucket(ember.tensor(relative), bidirectional, num_buckets,
                                   max_distance)
    expected = _bucket_numpy(relative, bidirectional, num_buckets, max_distance)
    assert got.dtype == ember.int64
    np.testing.assert_array_equal(got.numpy(), expected)
    assert got.min().item() >= 0 and got.max().item() == num_buckets - 1


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_t5_layer_norm_matches_numpy(dtype):
    norm = T5LayerNorm(6, eps=1e-3).to(dtype)
    with ember.no_grad():
        norm.weight.copy_(ember.linspace(0.5, 2.0, 6))
    x = np.random.default_rng(0).normal(3.0, 2.0, (2, 5, 6))
    with ember.no_grad():
        got = norm(ember.tensor(x, dtype=dtype))
    w = np.linspace(0.5, 2.0, 6)
    # No mean removed; the mean of squares in float32 whatever the input, as in transformers.
    variance = (x.astype(np.float32) ** 2).mean(-1, keepdims=True, dtype=np.float32)
    expected = w * x / np.sqrt(variance.astype(np.float64) + 1e-3)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5 if dtype == ember.float32
                               else 1e-7)


def test_t5_layer_norm_half_weights_give_half_outputs():
    norm = T5LayerNorm(4).to(ember.bfloat16).requires_grad_(False)
    out = norm(ember.ones(2, 4, dtype=ember.bfloat16) * 3)
    assert out.dtype == ember.bfloat16
    np.testing.assert_allclose(out.float().numpy(), np.ones((2, 4)), rtol=1e-2)


# -- the Hugging Face layout ----------------------------------------------------------------

def test_config_reads_the_t5_keys():
    config = T5Config.from_dict({"d_model": 8, "num_layers": 3, "feed_forward_proj": "gated-gelu",
                                 "tie_word_embeddings": False, "architectures": ["x"]})
    assert config.num_decoder_layers == 3 and config.is_gated_act
    assert config.dense_act_fn == "gelu_new" and config.hidden_size == 8
    assert not config.scale_decoder_outputs and config.extra == {"architectures": ["x"]}
    assert T5Config().scale_decoder_outputs and T5Config().decoder_start_token_id == 0
    assert T5Config(feed_forward_proj="gated-silu").dense_act_fn == "silu"
    with pytest.raises(ValueError, match="feed_forward_proj"):
        T5Config(feed_forward_proj="gated-gelu-x")
    with pytest.raises(ValueError, match="not supported"):
        T5Config(feed_forward_proj="swish7")


def test_state_dict_keys_are_those_of_transformers():
    keys = set(hf_model(feed_forward_proj="gated-gelu").state_dict())
    assert {"shared.weight", "lm_head.weight", "encoder.final_layer_norm.weight",
            "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
            "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
            "decoder.block.2.layer.1.EncDecAttention.q.weight",
            "decoder.block.2.layer.2.DenseReluDense.wi_1.weight",
            "encoder.block.1.layer.1.layer_norm.weight"} <= keys
    # The position bias is owned by the first block of each stack only.
    assert sorted(k for k in keys if "relative_attention_bias" in k) == [
        "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]
    relu = set(hf_model().state_dict())
    assert "encoder.block.0.layer.1.DenseReluDense.wi.weight" in relu


@ember.no_grad()
def test_shapes_of_the_outputs():
    model = hf_model()
    out = model(ids(0, (2, 7)), decoder_input_ids=ids(1, (2, 5)), output_hidden_states=True,
                output_attentions=True)
    assert out.logits.shape == (2, 5, 37) and out.encoder_last_hidden_state.shape == (2, 7, 16)
    assert len(out.past_key_values) == 3 and len(out.past_key_values[0]) == 4
    assert out.past_key_values[0][0].shape == (2, 4, 5, 4)  # self-attention keys
    assert out.past_key_values[0][2].shape == (2, 4, 7, 4)  # cross-attention keys
    assert len(out.decoder_hidden_states) == 4 and len(out.encoder_hidden_states) == 3
    assert out.cross_attentions[0].shape == (2, 4, 5, 7)
    assert out.decoder_attentions[1].shape == (2, 4, 5, 5)
    np.testing.assert_allclose(out.cross_attentions[0].sum(-1).numpy(), 1.0, rtol=1e-5)
    base = hf_model(modeling_t5.T5Model)
    assert base(ids(0, (2, 7)), decoder_input_ids=ids(1, (2, 5))).last_hidden_state.shape == \
        (2, 5, 16)
    encoder = hf_model(T5EncoderModel)
    assert encoder(ids(0, (2, 7))).last_hidden_state.shape == (2, 7, 16)
    empty = encoder(ember.zeros(2, 0, dtype=ember.long)).last_hidden_state
    assert empty.shape == (2, 0, 16)


@ember.no_grad()
def test_decoder_is_causal_and_padding_is_hidden():
    model = hf_model()
    source, target = ids(0, (1, 6)), ids(1, (1, 6))
    full = model(source, decoder_input_ids=target).logits
    changed = target.clone()
    changed[0, 4] = 2 if target[0, 4].item() != 2 else 3
    later = model(source, decoder_input_ids=changed).logits
    np.testing.assert_allclose(later[:, :4].numpy(), full[:, :4].numpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(later[:, 4:].numpy(), full[:, 4:].numpy())
    # Right padding hidden by the mask leaves the other positions as without it.
    padded = ember.cat([source, ember.zeros(1, 3, dtype=ember.long)], dim=1)
    mask = ember.tensor([[1] * 6 + [0] * 3])
    masked = model(padded, attention_mask=mask, decoder_input_ids=target)
    np.testing.assert_allclose(masked.logits.numpy(), full.numpy(), rtol=1e-5, atol=1e-6)


@ember.no_grad()
def test_cache_decoding_equals_full_decoding():
    model = hf_model(feed_forward_proj="gated-gelu")
    source, target = ids(2, (2, 9)), ids(3, (2, 8))
    mask = ember.tensor([[1] * 9, [1] * 6 + [0] * 3])
    full = model(source, attention_mask=mask, decoder_input_ids=target).logits
    encoded = model.encoder(source, mask)
    past, steps = None, []
    for t in range(8):
        out = model(attention_mask=mask, decoder_input_ids=target[:, t:t + 1],
                    encoder_outputs=encoded, past_key_values=past, use_cache=True)
        past = out.past_key_values
        steps.append(out.logits)
    np.testing.assert_allclose(ember.cat(steps, dim=1).numpy(), full.numpy(), rtol=1e-4,
                               atol=1e-5)
    assert past[0][0].shape[2] == 8


def test_loss_ignores_minus_100():
    model = hf_model()
    source = ids(4, (2, 6))
    labels = ids(5, (2, 5))
    labels[0, 3:] = -100
    out = model(source, labels=labels)
    logits = out.logits.detach().numpy().astype(np.float64)
    target = labels.numpy()
    keep = target != -100
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -log_probs[keep, target[keep]].mean()
    np.testing.assert_allclose(out.loss.item(), expected, rtol=1e-5)
    # The decoder reads the labels shifted right, -100 as padding.
    shifted = model._shift_right(labels)
    assert shifted[:, 0].tolist() == [0, 0] and shifted[0, 4].item() == 0
    assert shifted[1, 1:].tolist() == labels[1, :-1].tolist()


def test_training_step_lowers_the_loss():
    ember.manual_seed(0)
    model = T5ForConditionalGeneration(T5Config(**{**HF, "dropout_rate": 0.1}))
    model.train()
    optimizer = ember.optim.Adam(model.parameters(), lr=1e-2)
    source, labels = ids(6, (4, 6)), ids(7, (4, 5))
    losses = []
    for _ in range(6):
        optimizer.zero_grad()
        loss = model(source, labels=labels).loss
        loss.backward()
        losses.append(loss.item())
        optimizer.step()
    bias = model.encoder.block[0].layer[0].SelfAttention.relative_attention_bias.weight
    assert bias.grad is not None and bool(ember.isfinite(bias.grad).all())
    assert all(p.grad is not None for p in model.parameters())
    assert losses[-1] < losses[0]


def test_generate_greedy_sampling_and_eos():
    model = hf_model()
    source = ids(8, (2, 6))
    out = model.generate(source, max_new_tokens=6, eos_token_id=-1)
    assert out.shape == (2, 7) and out[:, 0].tolist() == [0, 0]
    with ember.no_grad():  # greedy: each token is the argmax of a full forward
        for t in range(1, 7):
            logits = model(source, decoder_input_ids=out[:, :t]).logits[:, -1]
            assert logits.argmax(-1).tolist() == out[:, t].tolist()
    eos = out[0, 2].item()  # the first sequence stops there: the rest is padding
    end = out[0, 1:].tolist().index(eos) + 1
    stopped = model.generate(source, max_new_tokens=6, eos_token_id=eos, pad_token_id=5)
    row = stopped[0].tolist()
    assert row[:end + 1] == out[0, :end + 1].tolist() and set(row[end + 1:]) <= {5}
    assert len(row) <= 7
    sampled = model.generate(source, max_new_tokens=6, do_sample=True, top_k=1,
                             eos_token_id=-1, generator=ember.Generator().manual_seed(0))
    assert sampled.tolist() == out.tolist()
    with pytest.raises(ValueError, match="max_new_tokens"):
        model.generate(source, max_new_tokens=-1)


def _save_hf(model, path, fmt):
    os.makedirs(path, exist_ok=True)
    config = model.config.to_dict()
    config.pop("extra", None)
    config["architectures"] = [type(model).__name__]
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f)
    # Like transformers: the tied copies of the shared embedding are not written.
    state = {k: v for k, v in model.state_dict().items()
             if k not in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight",
                          "lm_head.weight")}
    if fmt == "safetensors":
        from safetensors.numpy import save_file

        save_file({k: v.numpy() for k, v in state.items()},
                  os.path.join(path, "model.safetensors"))
    else:
        ember.save(state, os.path.join(path, "pytorch_model.bin"))


@pytest.mark.parametrize("fmt", ["safetensors", "bin"])
@ember.no_grad()
def test_from_pretrained_local_folder(tmp_path, fmt):
    pytest.importorskip("safetensors")
    source = hf_model(feed_forward_proj="gated-gelu")
    _save_hf(source, str(tmp_path), fmt)
    loaded = T5ForConditionalGeneration.from_pretrained(str(tmp_path))
    assert not loaded.training and loaded.lm_head.weight is loaded.shared.weight
    x, y = ids(9, (2, 5)), ids(10, (2, 4))
    np.testing.assert_array_equal(loaded(x, decoder_input_ids=y).logits.numpy(),
                                  source(x, decoder_input_ids=y).logits.numpy())
    encoder = T5EncoderModel.from_pretrained(str(tmp_path))  # the decoder is left out
    np.testing.assert_array_equal(encoder(x).last_hidden_state.numpy(),
                                  source.encoder(x).last_hidden_state.numpy())
    with pytest.raises(TypeError, match="no field"):
        T5ForConditionalGeneration.from_pretrained(str(tmp_path), d_modle=3)


def test_load_drops_the_old_cross_attention_bias_and_checks_strictly():
    model = hf_model()
    state = dict(model.state_dict())
    state["decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"] = \
        ember.zeros(8, 4)
    del state["lm_head.weight"]
    hf_model(seed=1).load_hf_state_dict(state)
    del state["decoder.final_layer_norm.weight"]
    with pytest.raises(RuntimeError, match="final_layer_norm"):
        hf_model(seed=1).load_hf_state_dict(state)


def test_bad_inputs():
    model = hf_model()
    with pytest.raises(ValueError, match="batch, length"):
        model(ember.tensor([1, 2, 3]), decoder_input_ids=ids(0, (1, 2)))
    with pytest.raises(ValueError, match="exactly one"):
        model.encoder()
    with pytest.raises(ValueError, match="attention_mask"):
        model(ids(0, (1, 3)), decoder_input_ids=ids(0, (1, 2)),
              decoder_attention_mask=ember.ones(1, 5))
    with pytest.raises(ValueError, match="use_cache"):
        model.encoder(ids(0, (1, 3)), use_cache=True)


# -- torchtext's layout ---------------------------------------------------------------------

def test_t5conf_and_torchtext_keys():
    assert T5Conf(feed_forward_proj="gated-gelu").activation == "gelu_new"
    assert T5Conf(feed_forward_proj="gated-gelu").is_gated_act
    with pytest.raises(ValueError, match="feed_forward_proj"):
        T5Conf(feed_forward_proj="relu-gated")
    keys = set(tt_model(linear_head=True, feed_forward_proj="gated-gelu").state_dict())
    assert {"token_embeddings.weight", "encoder.token_embeddings.weight", "encoder.norm.weight",
            "encoder.layers.0.self_attn.relative_attention_bias.weight",
            "encoder.layers.1.self_attn.q_proj_weight",
            "encoder.layers.1.self_attn.out_proj.weight",
            "decoder.layers.2.cross_attn.v_proj_weight", "decoder.layers.2.norm3.weight",
            "decoder.layers.0.linear1_0.weight", "decoder.layers.0.linear2.weight",
            "lm_head.weight"} <= keys
    assert not any("in_proj" in k or "layers.1.self_attn.relative" in k for k in keys)
    with pytest.raises(TypeError, match="T5Conf"):
        T5Model(T5Config())


@ember.no_grad()
def test_torchtext_model_outputs():
    model = tt_model(linear_head=True)
    out = model(ids(0, (2, 7)))
    assert out["decoder_output"].shape == (2, 1, 37)  # from the padding id alone
    assert out["encoder_output"].shape == (2, 7, 16)
    assert len(out["encoder_hidden_states"]) == 3 and len(out["decoder_hidden_states"]) == 4
    assert out["encoder_position_bias"].shape == (1, 4, 7, 7)
    assert out["decoder_sa_scores"][0].shape == (2, 4, 1, 1)
    assert out["decoder_ca_scores"][2].shape == (2, 4, 1, 7)
    assert out["past_key_values"] == []
    encoder = tt_model(encoder_only=True)
    enc = encoder(ids(0, (2, 7)))
    # torchtext's keys: the decoder's (and encoder_ca_scores) are there, None
    assert {k for k, v in enc.items() if v is not None} == {
        "encoder_output", "encoder_hidden_states", "encoder_position_bias", "encoder_sa_scores"}
    assert enc["decoder_output"] is None and enc["past_key_values"] is None
    with pytest.warns(UserWarning, match="Decoder"):
        assert encoder.get_decoder() is None
    frozen = T5Model(T5Conf(**TT), freeze=True)
    assert not any(p.requires_grad for p in frozen.parameters())
    double = T5Model(T5Conf(linear_head=True, **TT), dtype=ember.float64).eval()
    assert {p.dtype for p in double.parameters()} == {ember.float64}
    assert double(ids(0, (2, 7)))["decoder_output"].dtype == ember.float64


@ember.no_grad()
def test_torchtext_padding_tokens_are_masked():
    model = tt_model()
    source = ids(1, (1, 5))
    padded = ember.cat([source, ember.zeros(1, 3, dtype=ember.long)], dim=1)
    np.testing.assert_allclose(model(padded)["encoder_output"][:, :5].numpy(),
                               model(source)["encoder_output"].numpy(), rtol=1e-5, atol=1e-6)


@ember.no_grad()
def test_torchtext_cache_decoding_equals_full_decoding():
    model = tt_model(linear_head=True, feed_forward_proj="gated-gelu")
    source = ids(2, (2, 6))
    target = ids(3, (2, 5))
    target[:, 0] = 0
    encoded = model(source)
    full = model(decoder_tokens=target, encoder_outputs=encoded,
                 encoder_padding_mask=source.eq(0))["decoder_output"]
    past, steps = None, []
    for t in range(5):
        inputs = model.prepare_inputs_for_generation(target[:, :t + 1], encoded,
                                                     source.eq(0), past)
        out = model(**inputs)
        past = out["past_key_values"]
        steps.append(out["decoder_output"])
    np.testing.assert_allclose(ember.cat(steps, dim=1).numpy(), full.numpy(), rtol=1e-4,
                               atol=1e-5)
    reordered = model._reorder_cache(past, ember.tensor([1, 0]))
    np.testing.assert_array_equal(reordered[0][0][0].numpy(), past[0][0][1].numpy())


@pytest.mark.parametrize("fmt", ["safetensors", "bin"])
@ember.no_grad()
def test_build_model_from_huggingface_ckpt(tmp_path, fmt):
    pytest.importorskip("safetensors")
    source = hf_model(feed_forward_proj="gated-gelu")
    _save_hf(source, str(tmp_path), fmt)
    model = T5Bundle.build_model_from_huggingface_ckpt(str(tmp_path)).eval()
    assert model.linear_head  # the tied head of a T5ForConditionalGeneration
    x, y = ids(11, (2, 6)), ids(12, (2, 4))
    y[:, 0] = 0
    got = model(x, y)
    expected = source(x, decoder_input_ids=y)
    np.testing.assert_allclose(got["encoder_output"].numpy(),
                               expected.encoder_last_hidden_state.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["decoder_output"].numpy(), expected.logits.numpy(), rtol=1e-5,
                               atol=1e-5)
    encoder = T5Bundle.build_model_from_huggingface_ckpt(str(tmp_path), encoder_only=True,
                                                         freeze_model=True)
    assert encoder.decoder is None and not any(p.requires_grad for p in encoder.parameters())


# -- bundles and the checkpoint cache -------------------------------------------------------

def test_published_bundles():
    bucket = "https://download.pytorch.org/models/text/"
    assert T5_SMALL._path == bucket + "t5.small.v2.pt"
    assert T5_SMALL_ENCODER._path == bucket + "t5.small.encoder.v2.pt"
    assert T5_SMALL_GENERATION._path == bucket + "t5.small.generation.v2.pt"
    assert T5_BASE_ENCODER._path == bucket + "t5.base.encoder.v2.pt"
    assert T5_LARGE_GENERATION._path == bucket + "t5.large.generation.v2.pt"
    assert FLAN_T5_BASE_GENERATION._path == bucket + "t5.flan.base.generation.pt"
    small = T5_SMALL_GENERATION.config
    assert (small.embedding_dim, small.num_attention_heads, small.num_encoder_layers,
            small.ffn_dimension, small.linear_head, small.encoder_only) == \
        (512, 8, 6, 2048, True, False)
    assert T5_BASE.config == T5Conf() and T5_SMALL_ENCODER.config.encoder_only
    large = T5_LARGE_GENERATION.config
    assert (large.embedding_dim, large.num_attention_heads, large.num_encoder_layers,
            large.ffn_dimension) == (1024, 16, 24, 4096)
    assert FLAN_T5_BASE_GENERATION.config.is_gated_act
    assert len([n for n in t5_package.__all__ if n.startswith(("T5_", "FLAN_T5_"))]) == 27


def test_bundle_transform_downloads_the_sentencepiece_model(tmp_path, monkeypatch):
    fetched = []

    def fetch(url, path):  # offline: the download writes a model the test made
        fetched.append(url)
        with open(path, "wb") as f:
            f.write(model_bytes(PIECES))

    monkeypatch.setattr(embertext.utils, "_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(embertext.utils, "_fetch", fetch)
    transform = T5_SMALL.transform()
    assert isinstance(transform, T5Transform)
    assert fetched == ["https://download.pytorch.org/models/text/t5_tokenizer_base.model"]
    assert (transform.max_seq_len, transform.eos_idx, transform.padding_idx) == (512, 1, 0)
    assert transform(["hello"]).tolist() == [[6, 1]]


@ember.no_grad()
def test_bundle_loads_from_the_checkpoint_cache(tmp_path, monkeypatch, caplog):
    import ember.hub

    monkeypatch.setattr(ember.hub, "get_dir", lambda: str(tmp_path))
    source = tt_model(linear_head=True)
    os.makedirs(tmp_path / "checkpoints")
    ember.save(source.state_dict(), str(tmp_path / "checkpoints" / "t5.tiny.pt"))
    bundle = T5Bundle(_path="https://download.pytorch.org/models/text/t5.tiny.pt",
                      _config=T5Conf(linear_head=True, **TT))
    model = bundle.get_model().eval()
    x = ids(13, (2, 5))
    np.testing.assert_array_equal(model(x)["decoder_output"].numpy(),
                                  source(x)["decoder_output"].numpy())
    frozen = bundle.get_model(freeze_model=True)
    assert not any(p.requires_grad for p in frozen.parameters())
    moved = tmp_path / "elsewhere"
    os.makedirs(moved)
    os.replace(tmp_path / "checkpoints" / "t5.tiny.pt", moved / "t5.tiny.pt")
    bundle.get_model(dl_kwargs={"model_dir": str(moved)})
    with caplog.at_level(logging.WARNING):
        fresh = bundle.get_model(load_weights=False, freeze_model=True)
    assert "freeze_model" in caplog.text and isinstance(fresh, T5Model)
    with pytest.raises(AssertionError, match="load_weights"):
        T5Bundle(_config=T5Conf(**TT)).get_model()
    # build_model: a state dict, here the encoder's alone (strict=False by default).
    encoder_only = {k: v for k, v in source.state_dict().items() if k.startswith("encoder.")}
    partial = T5Bundle.build_model(T5Conf(linear_head=True, **TT), checkpoint=encoder_only)
    np.testing.assert_array_equal(partial.encoder.norm.weight.numpy(),
                                  source.encoder.norm.weight.numpy())
    with pytest.raises(RuntimeError, match="Missing"):
        T5Bundle.build_model(T5Conf(linear_head=True, **TT), checkpoint=encoder_only,
                             strict=True)
    with pytest.raises(TypeError, match="checkpoint"):
        T5Bundle.build_model(T5Conf(**TT), checkpoint=3)
    local = T5Bundle.build_model(T5Conf(linear_head=True, **TT), strict=True,
                                 checkpoint=str(moved / "t5.tiny.pt")).eval()
    np.testing.assert_array_equal(local(x)["decoder_output"].numpy(),
                                  source(x)["decoder_output"].numpy())


def test_offline_error_says_where_to_put_the_file(tmp_path):
    url = (tmp_path / "t5.missing.pt").as_uri()
    bundle = T5Bundle(_path=url, _config=T5Conf(**TT))
    with pytest.raises(RuntimeError, match="put the file at .*t5.missing.pt"):
        bundle.get_model(dl_kwargs={"model_dir": str(tmp_path / "cache"), "progress": False})
