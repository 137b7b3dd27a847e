"""Memory formats against PyTorch: strides and is_contiguous answers after the layout
changes PyTorch programs make (NOTE [ Memory formats ])."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def _pair(shape):
    a = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    return ember.tensor(a), torch.tensor(a)


def _answers(t, lib):
    """The strides of the dims of size > 1 (NumPy normalizes the strides of size-1 dims,
    which no element is reached through) and the is_contiguous answers per format."""
    out = []
    for name in FORMATS:
        out.append(t.is_contiguous(memory_format=getattr(lib, name)))
    strides = tuple(s for s, n in zip(t.stride(), t.shape, strict=True) if n > 1)
    return strides, tuple(out)


CASES = {
    "to_cl": lambda t, lib: t.to(memory_format=lib.channels_last),
    "contiguous_cl": lambda t, lib: t.contiguous(memory_format=lib.channels_last),
    "cl_back": lambda t, lib: t.to(memory_format=lib.channels_last).contiguous(),
    "cl_add": lambda t, lib: t.to(memory_format=lib.channels_last) * 2 + 1,
    "cl_clone": lambda t, lib: t.to(memory_format=lib.channels_last).clone(),
    "cl_clone_contiguous": lambda t, lib: t.to(memory_format=lib.channels_last).clone(
        memory_format=lib.contiguous_format),
    "cl_empty_like": lambda t, lib: lib.empty_like(t.to(memory_format=lib.channels_last)),
    "cl_zeros_like": lambda t, lib: lib.zeros_like(t.to(memory_format=lib.channels_last)),
    "cl_double": lambda t, lib: t.to(memory_format=lib.channels_last).double(),
    "cl_relu": lambda t, lib: lib.relu(t.to(memory_format=lib.channels_last)),
    "plain": lambda t, lib: t,
    "clone": lambda t, lib: t.clone(),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 1), (2, 1, 4, 5), (2, 3, 2, 4, 5)])
def test_strides_and_answers_match(case, shape):
    e, t = _pair(shape)
    fn = CASES[case]
    try:
        expected = _answers(fn(t, torch), torch)
    except RuntimeError as err:
        with pytest.raises(RuntimeError, match=str(err).split(" format")[0]):
            fn(e, ember)
        return
    got = fn(e, ember)
    assert _answers(got, ember) == expected
    if "empty" not in case:
        np.testing.assert_array_equal(got.numpy(), fn(t, torch).numpy())


def test_module_to_channels_last():
    m_e = ember.nn.Conv2d(3, 4, 3).to(memory_format=ember.channels_last)
    m_t = torch.nn.Conv2d(3, 4, 3).to(memory_format=torch.channels_last)
    assert m_e.weight.stride() == m_t.weight.stride()
    assert m_e.bias.stride() == m_t.bias.stride()
