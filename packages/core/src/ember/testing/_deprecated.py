"""``assert_allclose``: PyTorch's deprecated comparison, kept for old test suites."""

from __future__ import annotations

from typing import Any

__all__ = ["assert_allclose"]


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (as in PyTorch since 1.12): use :func:`ember.testing.assert_close`.

    Like ``assert_close`` with ``check_dtype=False`` and ``equal_nan=True`` by default; values
    that are not tensors become tensors (``expected`` of ``actual``'s dtype). Without
    ``rtol``/``atol``, the tolerance is the larger of the two dtypes' (float16: 1e-3/1e-3,
    float32: 1e-4/1e-5, float64: 1e-5/1e-8; exact for other dtypes).
    """
    import ember
    from ember.testing._comparison import assert_close

    if not isinstance(actual, ember.Tensor):
        actual = ember.tensor(actual)
    if not isinstance(expected, ember.Tensor):
        expected = ember.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        table = {ember.float16: (1e-3, 1e-3), ember.float32: (1e-4, 1e-5),
                 ember.float64: (1e-5, 1e-8)}
        pairs = [table.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
