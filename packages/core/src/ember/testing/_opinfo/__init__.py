"""ember's op database, one module per op family (see ``core`` for the format)."""

from __future__ import annotations

import importlib

from ember.testing._opinfo.core import OpInfo, SampleInput

# One module per family; each defines OPS, a list of OpInfo.
_FAMILIES = ("elementwise", "reduction", "shape", "indexing", "linalg", "sort", "creation",
             "conversion", "linalg_ext", "spectral", "complex", "special", "nn_activation",
             "nn_conv", "nn_norm", "nn_loss", "nn_misc", "nn_extra")
_FAMILIES += ("view_copy",)  # issue 15: view copies and scatters
# the math ops that came with the public-surface work (issue 15)
_FAMILIES += ("pointwise", "statistics", "calculus", "distance", "structure", "surface_misc")


def _load():
    ops = []
    for fam in _FAMILIES:
        try:
            mod = importlib.import_module(f"ember.testing._opinfo.{fam}")
        except ModuleNotFoundError as e:
            if e.name != f"ember.testing._opinfo.{fam}":
                raise
            continue
        ops.extend(mod.OPS)
    names = [o.name for o in ops]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RuntimeError(f"duplicate OpInfo names: {sorted(dup)}")
    return ops


op_db = _load()

__all__ = ["OpInfo", "SampleInput", "op_db"]
