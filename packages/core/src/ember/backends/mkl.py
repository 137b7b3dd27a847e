"""``ember.backends.mkl``: Intel MKL. ember's BLAS is the one NumPy is built with."""

__all__ = ["verbose", "is_available", "VERBOSE_OFF", "VERBOSE_ON"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available() -> bool:
    """True if NumPy's BLAS is Intel MKL (NumPy's wheels use OpenBLAS: False)."""
    from ember.backends import _blas_names

    return any("mkl" in n for n in _blas_names())


class verbose:  # noqa: N801 - PyTorch's name
    """Context manager for mkl's verbose logging. ember does not use MKL, so there is
    nothing to log: the block runs unchanged."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False
