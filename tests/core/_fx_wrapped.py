"""A module that wraps one of its functions for ember.fx tracing (test_fx_trace.py)."""

import ember
import ember.fx


def norm_plus(x, y):
    # data-dependent Python: tracing through it would fail, so it is wrapped as a leaf
    return x + float(ember.linalg.norm(y))


ember.fx.wrap("norm_plus")


def uses_wrapped(x):
    return norm_plus(x, x) * 2


@ember.fx.wrap
def scaled_to_one(x):
    # wrapped by decorator: float(x.max()) needs a real tensor
    return x / float(x.abs().max())


def uses_decorated(x):
    return scaled_to_one(x) + 1
