"""What the Hugging Face-layout configs share: a ``config.json`` read into a dataclass whose
fields are the keys a model uses; the other keys are kept in ``extra`` and written back."""

import json
from dataclasses import fields


class HFConfig:
    """Mixin for the ``@dataclass`` configs (each declares ``extra: dict`` and sets
    ``model_type``, the value ``to_dict`` writes)."""

    model_type = None

    @classmethod
    def _from_keys(cls, data, **overrides):
        """The config of the known keys of ``data`` (``overrides`` win), the rest in ``extra``."""
        names = {f.name for f in fields(cls)} - {"extra"}
        config = cls(**{**{k: v for k, v in data.items() if k in names}, **overrides})
        config.extra = {k: v for k, v in data.items() if k not in names}
        return config

    @classmethod
    def from_dict(cls, data):
        return cls._from_keys(data)

    @classmethod
    def from_json_file(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls.from_dict(json.load(f))

    def to_dict(self):
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        return {**self.extra, **data, "model_type": self.model_type}


def num_labels_override(data):
    """``num_labels`` from ``id2label``'s length where a config gives only the labels (as
    Hugging Face's configs do)."""
    if "id2label" in data and "num_labels" not in data:
        return {"num_labels": len(data["id2label"])}
    return {}
