"""OpInfos for the complex-tensor ops: view_as_real / view_as_complex, real / imag,
angle, abs and conj (polar and complex have theirs in ``creation``). Complex inputs
are built from real arrays inside the op (the generic tests perturb real inputs
only); complex outputs are compared as (real, imag) pairs."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import FLOATING, OpInfo, SampleInput, arr


def _parts(shapes):
    def samples(dtype, rng):
        for s in shapes:
            yield SampleInput(arr(rng, s, dtype), (arr(rng, s, dtype),))
    return samples


def _c(re, im):
    return ember.complex(re, im) if isinstance(re, ember.Tensor) else re + 1j * im


def _as_pairs(o):
    """A complex tensor (ember's or PyTorch's) or array as (real, imag) pairs."""
    if isinstance(o, ember.Tensor):
        return ember.view_as_real(o) if o.is_complex() else o
    if type(o).__module__.startswith("torch"):
        import torch

        return torch.view_as_real(o.resolve_conj()) if o.is_complex() else o
    o = np.asarray(o)
    return np.stack([o.real, o.imag], -1) if np.iscomplexobj(o) else o


def _t(name):
    return lambda torch: getattr(torch, name)


_SHAPES = [(3,), (2, 3), (0, 2)]

OPS = [
    OpInfo("view_as_real", lambda re, im: ember.view_as_real(_c(re, im)), _parts(_SHAPES),
           ref=lambda re, im: np.stack([re, im], -1),
           torch_op=lambda torch: lambda re, im: torch.view_as_real(torch.complex(re, im))),
    # (a non-contiguous last dim is an error, tested in tests/core/test_complex.py)
    OpInfo("view_as_complex", lambda x: ember.view_as_complex(x.contiguous()),
           lambda dtype, rng: iter([SampleInput(arr(rng, s, dtype)) for s in
                                    [(3, 2), (2, 4, 2)]]),
           ref=lambda x: x[..., 0] + 1j * x[..., 1],
           torch_op=lambda torch: lambda x: torch.view_as_complex(x.contiguous()),
           output_process=_as_pairs),
    OpInfo("adjoint", lambda re, im: ember.adjoint(_c(re, im)),
           _parts([(2, 3), (4, 2, 3), (0, 2)]),
           ref=lambda re, im: np.conj(np.swapaxes(re + 1j * im, -1, -2)),
           torch_op=lambda torch: lambda re, im: torch.adjoint(torch.complex(re, im)),
           output_process=_as_pairs),
    OpInfo("conj_physical_", lambda re, im: ember.conj_physical_(_c(re, im) * 1),
           _parts(_SHAPES), ref=lambda re, im: re - 1j * im,
           torch_op=lambda torch: lambda re, im: torch.conj_physical_(torch.complex(re, im) * 1),
           output_process=_as_pairs),
    OpInfo("adjoint_real", ember.adjoint, lambda dtype, rng: iter(
               [SampleInput(arr(rng, s, dtype)) for s in [(2, 3), (4, 2, 3)]]),
           ref=lambda x: np.swapaxes(x, -1, -2),
           torch_op=lambda torch: torch.adjoint),
    OpInfo("real", lambda re, im: ember.real(_c(re, im)), _parts(_SHAPES),
           ref=lambda re, im: re,
           torch_op=lambda torch: lambda re, im: torch.real(torch.complex(re, im))),
    OpInfo("imag", lambda re, im: ember.imag(_c(re, im)), _parts(_SHAPES),
           ref=lambda re, im: im,
           torch_op=lambda torch: lambda re, im: torch.imag(torch.complex(re, im))),
    OpInfo("real_of_real", ember.real, lambda dtype, rng: iter([SampleInput(arr(rng, 3, dtype))]),
           ref=lambda x: x, torch_op=_t("real")),
    OpInfo("angle", lambda re, im: ember.angle(_c(re, im)), _parts(_SHAPES),
           ref=lambda re, im: np.angle(re + 1j * im),
           torch_op=lambda torch: lambda re, im: torch.angle(torch.complex(re, im))),
    OpInfo("angle_real", ember.angle,
           lambda dtype, rng: iter([SampleInput(np.array([-2.0, 3.0, -0.5], dtype))]),
           ref=lambda x: np.where(x < 0, np.pi, 0.0), torch_op=_t("angle"), method="angle"),
    OpInfo("abs_complex", lambda re, im: ember.abs(_c(re, im)), _parts(_SHAPES),
           ref=lambda re, im: np.abs(re + 1j * im),
           torch_op=lambda torch: lambda re, im: torch.abs(torch.complex(re, im))),
    OpInfo("conj_complex", lambda re, im: _c(re, im).conj(), _parts(_SHAPES),
           ref=lambda re, im: re - 1j * im, output_process=_as_pairs,
           torch_op=lambda torch: lambda re, im: torch.complex(re, im).conj().resolve_conj()),
    OpInfo("conj_physical", lambda re, im: ember.conj_physical(_c(re, im)), _parts(_SHAPES),
           ref=lambda re, im: re - 1j * im, output_process=_as_pairs,
           torch_op=lambda torch: lambda re, im: torch.conj_physical(torch.complex(re, im))),
]
for _op in OPS:
    _op.dtypes = FLOATING
