"""``ember.backends.mps``: Apple's Metal backend, which ember does not have."""

__all__ = ["is_available", "is_built", "is_macos13_or_newer", "is_macos_or_newer",
           "get_core_count", "get_name"]


def is_available() -> bool:
    """False: ember has no Metal (MPS) backend."""
    return False


def is_built() -> bool:
    """False: ember has no Metal (MPS) backend."""
    return False


def is_macos_or_newer(major: int, minor: int) -> bool:
    """False: there is no MPS device to ask."""
    return False


def is_macos13_or_newer(minor: int = 0) -> bool:
    """False: there is no MPS device to ask."""
    return False


def get_core_count() -> int:
    """The MPS device's GPU core count: raises, ember has no MPS backend."""
    raise RuntimeError("MPS is not available: ember has no Metal backend")


def get_name() -> str:
    """The MPS device's name: raises, ember has no MPS backend."""
    raise RuntimeError("MPS is not available: ember has no Metal backend")
