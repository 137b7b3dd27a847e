"""embertext.models.bert against Hugging Face `transformers`: a small random BERT built and
saved by transformers loads with strict=True and gives the same hidden states and logits."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("embertext")  # the interop session of CI has only ember
transformers = pytest.importorskip("transformers")

import ember  # noqa: E402
from embertext.models import (  # noqa: E402
    BertForMaskedLM,
    BertForSequenceClassification,
    BertModel,
)

CONFIG = dict(vocab_size=120, hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=96, max_position_embeddings=40, type_vocab_size=2,
              num_labels=3)


def inputs():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 120, size=(3, 11))
    mask = np.ones((3, 11), dtype=np.int64)
    mask[1, 7:] = 0
    mask[2, 3:] = 0
    types = np.zeros((3, 11), dtype=np.int64)
    types[:, 6:] = 1
    return ids, mask, types


@pytest.fixture(scope="module", params=["safetensors", "bin"])
def saved(tmp_path_factory, request):
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp(request.param)
    config = transformers.BertConfig(**CONFIG)
    models = {}
    for name, cls in [("base", transformers.BertModel), ("mlm", transformers.BertForMaskedLM),
                      ("cls", transformers.BertForSequenceClassification)]:
        model = cls(config).eval()
        path = folder / name
        model.save_pretrained(str(path), safe_serialization=request.param == "safetensors")
        models[name] = (model, str(path))
    return models


def run_reference(model, **kwargs):
    with torch.no_grad():
        return model(**{k: torch.tensor(v) for k, v in kwargs.items()})


@ember.no_grad()
def test_bert_model_hidden_states(saved):
    reference, path = saved["base"]
    ours = BertModel.from_pretrained(path)
    ids, mask, types = inputs()
    expected = run_reference(reference, input_ids=ids, attention_mask=mask, token_type_ids=types)
    got = ours(ember.tensor(ids), attention_mask=ember.tensor(mask),
               token_type_ids=ember.tensor(types))
    np.testing.assert_allclose(got.last_hidden_state.numpy(),
                               expected.last_hidden_state.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got.pooler_output.numpy(), expected.pooler_output.numpy(),
                               rtol=1e-4, atol=1e-5)
    plain = run_reference(reference, input_ids=ids)
    np.testing.assert_allclose(ours(ember.tensor(ids))[0].numpy(),
                               plain.last_hidden_state.numpy(), rtol=1e-4, atol=1e-5)


@ember.no_grad()
def test_masked_lm_and_classification_logits(saved):
    ids, mask, types = inputs()
    for name, cls in [("mlm", BertForMaskedLM), ("cls", BertForSequenceClassification)]:
        reference, path = saved[name]
        ours = cls.from_pretrained(path)
        expected = run_reference(reference, input_ids=ids, attention_mask=mask,
                                 token_type_ids=types)
        got = ours(ember.tensor(ids), attention_mask=ember.tensor(mask),
                   token_type_ids=ember.tensor(types))
        np.testing.assert_allclose(got.logits.numpy(), expected.logits.numpy(), rtol=1e-4,
                                   atol=1e-5)


@ember.no_grad()
def test_loss_matches(saved):
    reference, path = saved["mlm"]
    ours = BertForMaskedLM.from_pretrained(path)
    ids, mask, _ = inputs()
    labels = np.full_like(ids, -100)
    labels[:, 2] = ids[:, 2]
    expected = run_reference(reference, input_ids=ids, attention_mask=mask, labels=labels)
    got = ours(ember.tensor(ids), attention_mask=ember.tensor(mask), labels=ember.tensor(labels))
    assert got.loss.item() == pytest.approx(expected.loss.item(), rel=1e-5)


def test_state_dict_keys_are_transformers(saved):
    for name, cls in [("base", BertModel), ("mlm", BertForMaskedLM),
                      ("cls", BertForSequenceClassification)]:
        reference, _ = saved[name]
        ours = cls(ember_config())
        theirs = {k for k in reference.state_dict() if not k.endswith("position_ids")}
        assert set(ours.state_dict()) - {"cls.predictions.decoder.weight"} <= theirs
        assert theirs - set(ours.state_dict()) <= {"cls.predictions.decoder.bias",
                                                   "cls.predictions.decoder.weight"}


def ember_config():
    from embertext.models import BertConfig

    return BertConfig.from_dict(CONFIG)
