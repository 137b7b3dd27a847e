"""The machinery behind ``ember.save`` / ``ember.load`` (public face: ``ember.serialization``).

- ``_zip``: the zip container, laid out as PyTorch writes it.
- ``_format``: PyTorch's names in a checkpoint and the tensor rebuild functions.
- ``_unpickler``: the weights-only (allow-list) unpickler and the unrestricted one.
- ``_save``: the pickler writing PyTorch's names, the storage table, atomic writes.
- ``_load``: reading the zip format (or memory-mapping it) and the legacy pre-zip format.
"""
