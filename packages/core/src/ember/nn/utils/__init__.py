"""``ember.nn.utils`` (being written)."""

__all__: list = []
