"""Utilities: ``ember.utils.safetensors`` (the safetensors format)."""
