"""embertext.models.bert without transformers: key names, masks, loading, training."""

import json

import numpy as np
import pytest

import ember
from embertext.models import BertConfig, BertForMaskedLM, BertForSequenceClassification, BertModel

CONFIG = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=32, max_position_embeddings=20, num_labels=3)


def test_state_dict_keys():
    keys = list(BertModel(CONFIG).state_dict())
    assert keys[:5] == ["embeddings.word_embeddings.weight",
                        "embeddings.position_embeddings.weight",
                        "embeddings.token_type_embeddings.weight",
                        "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    layer = [k[len("encoder.layer.1."):] for k in keys if k.startswith("encoder.layer.1.")]
    assert layer == [
        "attention.self.query.weight", "attention.self.query.bias", "attention.self.key.weight",
        "attention.self.key.bias", "attention.self.value.weight", "attention.self.value.bias",
        "attention.output.dense.weight", "attention.output.dense.bias",
        "attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias",
        "intermediate.dense.weight", "intermediate.dense.bias", "output.dense.weight",
        "output.dense.bias", "output.LayerNorm.weight", "output.LayerNorm.bias"]
    assert keys[-2:] == ["pooler.dense.weight", "pooler.dense.bias"]
    mlm = BertForMaskedLM(CONFIG)
    assert mlm.cls.predictions.decoder.weight is mlm.bert.embeddings.word_embeddings.weight


@ember.no_grad()
def test_padding_does_not_change_the_other_positions():
    model = BertModel(CONFIG).eval()
    ids = ember.tensor([[3, 4, 5, 6]])
    short = model(ember.tensor([[3, 4]])).last_hidden_state
    padded = model(ids, attention_mask=ember.tensor([[1, 1, 0, 0]])).last_hidden_state
    np.testing.assert_allclose(padded[:, :2].numpy(), short.numpy(), rtol=1e-5, atol=1e-6)
    full = model(ids).last_hidden_state
    assert not np.allclose(full[:, :2].numpy(), short.numpy())
    with pytest.raises(ValueError, match="max_position_embeddings"):
        model(ember.zeros(1, 21, dtype=ember.long))
    with pytest.raises(ValueError, match="batch, length"):
        model(ember.tensor([1, 2]))


@ember.no_grad()
def test_from_pretrained_safetensors_round_trip(tmp_path):
    pytest.importorskip("safetensors")
    from safetensors.numpy import save_file

    model = BertForSequenceClassification(CONFIG).eval()
    save_file({k: v.numpy() for k, v in model.state_dict().items()},
              str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(CONFIG.to_dict()))
    loaded = BertForSequenceClassification.from_pretrained(str(tmp_path))
    ids = ember.tensor([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(loaded(ids).logits.numpy(), model(ids).logits.numpy())
    # The encoder alone loads from the classifier's checkpoint ("bert." prefix).
    encoder = BertModel.from_pretrained(str(tmp_path))
    np.testing.assert_array_equal(encoder(ids)[0].numpy(), model.bert(ids)[0].numpy())
    with pytest.raises(FileNotFoundError):
        BertModel.from_pretrained(str(tmp_path / "nothing"))


def test_bad_config():
    with pytest.raises(ValueError, match="multiple"):
        BertConfig.from_dict({"hidden_size": 10, "num_attention_heads": 3})
    with pytest.raises(ValueError, match="position_embedding_type"):
        BertConfig.from_dict({"position_embedding_type": "relative_key"})
    with pytest.raises(ValueError, match="hidden_act"):
        BertModel(BertConfig(hidden_act="swishy", hidden_size=8, num_attention_heads=2,
                             num_hidden_layers=1, intermediate_size=8))


def test_classifier_trains():
    ember.manual_seed(0)
    model = BertForSequenceClassification(CONFIG)
    ids = ember.randint(1, 50, (6, 5))
    labels = ember.tensor([0, 1, 2, 0, 1, 2])
    optimizer = ember.optim.Adam(model.parameters(), lr=1e-2)
    first = None
    for _ in range(15):
        loss = model(ids, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        first = first if first is not None else loss.item()
    assert loss.item() < first * 0.5
    mlm = BertForMaskedLM(CONFIG)
    labels = ember.full((6, 5), -100, dtype=ember.long)
    labels[:, 1] = ids[:, 1]
    out = mlm(ids, labels=labels)
    assert out.logits.shape == (6, 5, 50) and out.loss.item() > 0


@ember.no_grad()
def test_roberta_positions_skip_padding_and_keys():
    from embertext.models import RobertaConfig, RobertaForMaskedLM
    from embertext.models.roberta.modeling_roberta import RobertaModel

    config = RobertaConfig(vocab_size=40, hidden_size=8, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=16,
                           max_position_embeddings=12)
    model = RobertaModel(config).eval()
    ids = ember.tensor([[0, 5, 6, 1, 1]])
    embeddings = model.embeddings
    expected = embeddings.LayerNorm(
        embeddings.word_embeddings(ids) + embeddings.token_type_embeddings(ember.zeros_like(ids))
        + embeddings.position_embeddings(ember.tensor([[2, 3, 4, 1, 1]])))
    np.testing.assert_allclose(embeddings(ids).numpy(), expected.numpy(), rtol=1e-6)
    short = model(ember.tensor([[0, 5, 6]])).last_hidden_state
    padded = model(ids, attention_mask=ember.tensor([[1, 1, 1, 0, 0]])).last_hidden_state
    np.testing.assert_allclose(padded[:, :3].numpy(), short.numpy(), rtol=1e-5, atol=1e-6)
    keys = set(RobertaForMaskedLM(config).state_dict())
    assert {"lm_head.dense.weight", "lm_head.layer_norm.bias", "lm_head.bias",
            "roberta.embeddings.position_embeddings.weight"} <= keys


@ember.no_grad()
def test_distilbert_keys_tie_and_padding():
    from embertext.models import DistilBertConfig, DistilBertForMaskedLM, DistilBertModel

    config = DistilBertConfig(vocab_size=30, dim=8, n_layers=1, n_heads=2, hidden_dim=16,
                              max_position_embeddings=10)
    keys = list(DistilBertModel(config).state_dict())
    assert keys[:2] == ["embeddings.word_embeddings.weight",
                        "embeddings.position_embeddings.weight"]
    assert "transformer.layer.0.attention.q_lin.weight" in keys
    assert "transformer.layer.0.output_layer_norm.bias" in keys
    mlm = DistilBertForMaskedLM(config)
    assert mlm.vocab_projector.weight is mlm.distilbert.embeddings.word_embeddings.weight
    model = DistilBertModel(config).eval()
    short = model(ember.tensor([[3, 4]]))[0]
    padded = model(ember.tensor([[3, 4, 0]]), attention_mask=ember.tensor([[1, 1, 0]]))[0]
    np.testing.assert_allclose(padded[:, :2].numpy(), short.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="multiple"):
        DistilBertConfig.from_dict({"dim": 10, "n_heads": 3})
