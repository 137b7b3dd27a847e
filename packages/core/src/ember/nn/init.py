"""``ember.nn.init``: parameter initialization (being written)."""

__all__: list = []
