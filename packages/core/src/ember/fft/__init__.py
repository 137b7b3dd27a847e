"""ember.fft: PyTorch's ``torch.fft`` (discrete Fourier transforms, their frequencies
and shifts) on pocketfft through NumPy, differentiable. The ops live in
``ember._ops._fft``.
"""

from ember._ops._fft import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    hfft2,
    hfftn,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    ihfft2,
    ihfftn,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)
from ember._tensor import Tensor  # noqa: E402,F401 - torch.fft.Tensor is torch.Tensor

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
    "rfftfreq", "fftshift", "ifftshift",
]
