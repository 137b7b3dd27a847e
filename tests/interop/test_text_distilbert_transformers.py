"""embertext.models.distilbert against Hugging Face `transformers`."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("embertext")  # the interop session of CI has only ember
transformers = pytest.importorskip("transformers")

import ember  # noqa: E402
from embertext.models import (  # noqa: E402
    DistilBertForMaskedLM,
    DistilBertForSequenceClassification,
    DistilBertModel,
)

CONFIG = dict(vocab_size=80, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
              max_position_embeddings=24, num_labels=3)


@ember.no_grad()
def test_outputs_match(tmp_path):
    torch.manual_seed(0)
    config = transformers.DistilBertConfig(**CONFIG)
    ids = np.random.default_rng(0).integers(1, 80, (3, 8))
    mask = np.ones_like(ids)
    mask[1, 5:] = 0
    for name, ref_cls, cls, field in [
            ("base", transformers.DistilBertModel, DistilBertModel, "last_hidden_state"),
            ("mlm", transformers.DistilBertForMaskedLM, DistilBertForMaskedLM, "logits"),
            ("cls", transformers.DistilBertForSequenceClassification,
             DistilBertForSequenceClassification, "logits")]:
        reference = ref_cls(config).eval()
        reference.save_pretrained(str(tmp_path / name))
        ours = cls.from_pretrained(str(tmp_path / name))
        with torch.no_grad():
            expected = getattr(reference(input_ids=torch.tensor(ids),
                                         attention_mask=torch.tensor(mask)), field)
        got = getattr(ours(ember.tensor(ids), attention_mask=ember.tensor(mask)), field)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
        if name == "cls":
            encoder = DistilBertModel.from_pretrained(str(tmp_path / name))
            with torch.no_grad():
                hidden = reference.distilbert(input_ids=torch.tensor(ids)).last_hidden_state
            np.testing.assert_allclose(encoder(ember.tensor(ids))[0].numpy(), hidden.numpy(),
                                       rtol=1e-4, atol=1e-5)
