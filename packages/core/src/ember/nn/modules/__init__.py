"""The layers of ``ember.nn``, one family per file."""

from ember.nn.modules.module import Module

__all__ = ["Module"]
