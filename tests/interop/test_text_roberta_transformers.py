"""embertext.models.roberta.modeling_roberta against Hugging Face `transformers` (small random
models saved by transformers, loaded with strict=True)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("embertext")  # the interop session of CI has only ember
transformers = pytest.importorskip("transformers")

import ember  # noqa: E402
from embertext.models.roberta.modeling_roberta import (  # noqa: E402
    RobertaForMaskedLM,
    RobertaForSequenceClassification,
    RobertaModel,
)

CONFIG = dict(vocab_size=90, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=64, max_position_embeddings=34, type_vocab_size=1,
              layer_norm_eps=1e-5, pad_token_id=1, num_labels=2)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("roberta")
    config = transformers.RobertaConfig(**CONFIG)
    models = {}
    for name, cls in [("base", transformers.RobertaModel),
                      ("mlm", transformers.RobertaForMaskedLM),
                      ("cls", transformers.RobertaForSequenceClassification)]:
        model = cls(config).eval()
        model.save_pretrained(str(folder / name))
        models[name] = (model, str(folder / name))
    return models


def batch():
    ids = np.array([[0, 5, 9, 33, 2, 1, 1], [0, 44, 2, 1, 1, 1, 1], [0, 7, 8, 9, 10, 11, 2]])
    return ids, (ids != 1).astype(np.int64)


@ember.no_grad()
def test_hidden_states_and_logits(saved):
    ids, mask = batch()
    for name, cls, field in [("base", RobertaModel, "last_hidden_state"),
                             ("mlm", RobertaForMaskedLM, "logits"),
                             ("cls", RobertaForSequenceClassification, "logits")]:
        reference, path = saved[name]
        ours = cls.from_pretrained(path)
        with torch.no_grad():
            expected = getattr(reference(input_ids=torch.tensor(ids),
                                         attention_mask=torch.tensor(mask)), field)
        got = getattr(ours(ember.tensor(ids), attention_mask=ember.tensor(mask)), field)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
    reference, path = saved["base"]
    with torch.no_grad():
        pooled = reference(input_ids=torch.tensor(ids),
                           attention_mask=torch.tensor(mask)).pooler_output
    got = RobertaModel.from_pretrained(path)(ember.tensor(ids), ember.tensor(mask))
    np.testing.assert_allclose(got.pooler_output.numpy(), pooled.numpy(), rtol=1e-4, atol=1e-5)
