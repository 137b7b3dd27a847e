"""``ember.backends.openmp``: whether ember's compiled kernels run on OpenMP threads."""

__all__ = ["is_available"]


def is_available() -> bool:
    """True if ember's compiled kernels were built with OpenMP (an OpenMP runtime is loaded
    with them; ``ember.set_num_threads`` sets its thread count)."""
    from threadpoolctl import threadpool_info

    import ember._C._kernels  # noqa: F401 - the OpenMP runtime loads with the kernels

    return any(lib["user_api"] == "openmp" for lib in threadpool_info())
