"""Multi-channel transforms: PSD matrices and MVDR beamforming (mask-based, RTF-based and
Souden's), with torchaudio's buffers (``psd_s``, ``psd_n``, ``mask_sum_s``, ``mask_sum_n``)."""

from __future__ import annotations

import warnings

import ember
from ember import nn
from emberaudio import functional as F
from emberaudio.functional._spectral import _pack

__all__ = ["MVDR", "PSD", "RTFMVDR", "SoudenMVDR"]

_SOLUTIONS = ("ref_channel", "stv_evd", "stv_power")


def _get_mvdr_vector(psd_s, psd_n, reference_vector, solution="ref_channel",
                     diagonal_loading=True, diag_eps=1e-7, eps=1e-8):
    if solution == "ref_channel":
        return F.mvdr_weights_souden(psd_s, psd_n, reference_vector, diagonal_loading,
                                     diag_eps, eps)
    if solution == "stv_evd":
        stv = F.rtf_evd(psd_s)
    else:
        stv = F.rtf_power(psd_s, psd_n, reference_vector, diagonal_loading=diagonal_loading,
                          diag_eps=diag_eps)
    return F.mvdr_weights_rtf(stv, psd_n, reference_vector, diagonal_loading, diag_eps, eps)


class PSD(nn.Module):
    r"""Compute the cross-channel power spectral density (PSD) matrix.

    Args:
        multi_mask (bool, optional): if ``True``, only accepts multi-channel time-frequency
            masks (averaged over channels). Default: ``False``.
        normalize (bool, optional): if ``True``, normalize the mask along the time
            dimension. Default: ``True``.
        eps (float, optional): value to add to the denominator in mask normalization.
            Default: ``1e-15``.
    """

    def __init__(self, multi_mask: bool = False, normalize: bool = True,
                 eps: float = 1e-15) -> None:
        super().__init__()
        self.multi_mask = multi_mask
        self.normalize = normalize
        self.eps = eps

    def forward(self, specgram: ember.Tensor, mask: ember.Tensor | None = None) -> ember.Tensor:
        """
        Args:
            specgram (Tensor): multi-channel complex-valued spectrum,
                ``(..., channel, freq, time)``.
            mask (Tensor or None, optional): time-frequency mask, ``(..., freq, time)``, or
                ``(..., channel, freq, time)`` if ``multi_mask``.

        Returns:
            Tensor: the complex-valued PSD matrix, ``(..., freq, channel, channel)``.
        """
        if mask is not None and self.multi_mask:
            mask = mask.mean(dim=-3)
        return F.psd(specgram, mask, self.normalize, self.eps)


class MVDR(nn.Module):
    r"""Minimum Variance Distortionless Response (MVDR) beamforming with time-frequency
    masks: the PSD matrices of speech and noise are estimated from the masks, the weights
    by Souden's reference-channel solution (``"ref_channel"``) or from a steering vector
    found by eigendecomposition (``"stv_evd"``) or the power method (``"stv_power"``).
    The computation runs in complex128 and the output is cast back to the input's dtype.

    Args:
        ref_channel (int, optional): reference channel for beamforming. Default: ``0``.
        solution (str, optional): ``"ref_channel"``, ``"stv_evd"`` or ``"stv_power"``.
            Default: ``"ref_channel"``.
        multi_mask (bool, optional): if ``True``, only accepts multi-channel masks.
            Default: ``False``.
        diag_loading (bool, optional): apply diagonal loading to the noise PSD.
            Default: ``True``.
        diag_eps (float, optional): the coefficient of the identity in diagonal loading.
            Default: ``1e-7``.
        online (bool, optional): update the weights recursively from the previous PSD
            matrices (kept in the ``psd_s``/``psd_n``/``mask_sum_*`` buffers).
            Default: ``False``.
    """

    def __init__(self, ref_channel: int = 0, solution: str = "ref_channel",
                 multi_mask: bool = False, diag_loading: bool = True, diag_eps: float = 1e-7,
                 online: bool = False) -> None:
        super().__init__()
        if solution not in _SOLUTIONS:
            raise ValueError(f"Unknown solution provided. Must be one of {list(_SOLUTIONS)}, "
                             f"got {solution!r}.")
        self.ref_channel = ref_channel
        self.solution = solution
        self.multi_mask = multi_mask
        self.diag_loading = diag_loading
        self.diag_eps = diag_eps
        self.online = online
        self.psd = PSD(multi_mask)
        self.register_buffer("psd_s", ember.zeros(1))
        self.register_buffer("psd_n", ember.zeros(1))
        self.register_buffer("mask_sum_s", ember.zeros(1))
        self.register_buffer("mask_sum_n", ember.zeros(1))

    def _get_updated_mvdr_vector(self, psd_s, psd_n, mask_s, mask_n, reference_vector,
                                 solution="ref_channel", diagonal_loading=True, diag_eps=1e-7,
                                 eps=1e-8):
        if self.multi_mask:
            mask_s = mask_s.mean(dim=-3)
            mask_n = mask_n.mean(dim=-3)
        if self.psd_s.ndim == 1:
            self.psd_s = psd_s
            self.psd_n = psd_n
            self.mask_sum_s = mask_s.sum(dim=-1)
            self.mask_sum_n = mask_n.sum(dim=-1)
        else:
            psd_s = self._get_updated_psd(self.psd_s, self.mask_sum_s, psd_s, mask_s)
            psd_n = self._get_updated_psd(self.psd_n, self.mask_sum_n, psd_n, mask_n)
            self.psd_s = psd_s
            self.psd_n = psd_n
            self.mask_sum_s = self.mask_sum_s + mask_s.sum(dim=-1)
            self.mask_sum_n = self.mask_sum_n + mask_n.sum(dim=-1)
        return _get_mvdr_vector(psd_s, psd_n, reference_vector, solution, diagonal_loading,
                                diag_eps, eps)

    @staticmethod
    def _get_updated_psd(previous, mask_sum, psd, mask):
        total = mask_sum + mask.sum(dim=-1)
        return previous * (mask_sum / total)[..., None, None] + psd * (1 / total)[..., None, None]

    def forward(self, specgram: ember.Tensor, mask_s: ember.Tensor,
                mask_n: ember.Tensor | None = None) -> ember.Tensor:
        """
        Args:
            specgram (Tensor): multi-channel complex-valued spectrum,
                ``(..., channel, freq, time)``.
            mask_s (Tensor): time-frequency mask of target speech, ``(..., freq, time)`` or
                ``(..., channel, freq, time)`` if ``multi_mask``.
            mask_n (Tensor or None, optional): time-frequency mask of noise, of the same
                shape; ``None`` uses ``1 - mask_s``.

        Returns:
            Tensor: single-channel complex-valued enhanced spectrum, ``(..., freq, time)``.
        """
        dtype = specgram.dtype
        if specgram.ndim < 3:
            raise ValueError("Expected at least 3D tensor (..., channel, freq, time). Found: "
                             f"{tuple(specgram.shape)}")
        if not specgram.is_complex():
            raise ValueError("The type of ``specgram`` tensor must be ``ember.cfloat`` or "
                             f"``ember.cdouble``. Found: {specgram.dtype}")
        if specgram.dtype == ember.complex64:
            specgram = specgram.to(ember.complex128)
        if mask_n is None:
            warnings.warn("``mask_n`` is not provided, use ``1 - mask_s`` as ``mask_n``.",
                          stacklevel=2)
            mask_n = 1 - mask_s
        shape = specgram.shape
        specgram = _pack(specgram, 3)
        if self.multi_mask:
            mask_s = _pack(mask_s, 3)
            mask_n = _pack(mask_n, 3)
        else:
            mask_s = _pack(mask_s, 2)
            mask_n = _pack(mask_n, 2)
        psd_s = self.psd(specgram, mask_s)
        psd_n = self.psd(specgram, mask_n)
        u = ember.zeros(tuple(specgram.shape[:-2]), device=specgram.device,
                        dtype=ember.complex128)
        u[..., self.ref_channel] = 1
        if self.online:
            w_mvdr = self._get_updated_mvdr_vector(psd_s, psd_n, mask_s, mask_n, u,
                                                   self.solution, self.diag_loading,
                                                   self.diag_eps)
        else:
            w_mvdr = _get_mvdr_vector(psd_s, psd_n, u, self.solution, self.diag_loading,
                                      self.diag_eps)
        enhanced = F.apply_beamforming(w_mvdr, specgram)
        return enhanced.reshape(*shape[:-3], *shape[-2:]).to(dtype)


class RTFMVDR(nn.Module):
    r"""MVDR beamforming from the relative transfer function (RTF) of the target speech and
    the PSD matrix of noise (see :func:`emberaudio.functional.mvdr_weights_rtf`), applied to
    the multi-channel spectrum."""

    def forward(self, specgram: ember.Tensor, rtf: ember.Tensor, psd_n: ember.Tensor,
                reference_channel: int | ember.Tensor, diagonal_loading: bool = True,
                diag_eps: float = 1e-7, eps: float = 1e-8) -> ember.Tensor:
        """
        Args:
            specgram (Tensor): multi-channel complex spectrum, ``(..., channel, freq, time)``.
            rtf (Tensor): complex RTF vector of target speech, ``(..., freq, channel)``.
            psd_n (Tensor): complex PSD matrix of noise, ``(..., freq, channel, channel)``.
            reference_channel (int or Tensor): the reference channel (index or one-hot).
            diagonal_loading (bool, optional): diagonal loading of ``psd_n``.
                Default: ``True``.
            diag_eps (float, optional): diagonal loading coefficient. Default: ``1e-7``.
            eps (float, optional): added to the denominator. Default: ``1e-8``.

        Returns:
            Tensor: single-channel complex enhanced spectrum, ``(..., freq, time)``.
        """
        w_mvdr = F.mvdr_weights_rtf(rtf, psd_n, reference_channel, diagonal_loading, diag_eps,
                                    eps)
        return F.apply_beamforming(w_mvdr, specgram)


class SoudenMVDR(nn.Module):
    r"""MVDR beamforming by Souden's method from the PSD matrices of speech and noise (see
    :func:`emberaudio.functional.mvdr_weights_souden`), applied to the multi-channel
    spectrum."""

    def forward(self, specgram: ember.Tensor, psd_s: ember.Tensor, psd_n: ember.Tensor,
                reference_channel: int | ember.Tensor, diagonal_loading: bool = True,
                diag_eps: float = 1e-7, eps: float = 1e-8) -> ember.Tensor:
        """
        Args:
            specgram (Tensor): multi-channel complex spectrum, ``(..., channel, freq, time)``.
            psd_s (Tensor): complex PSD matrix of speech, ``(..., freq, channel, channel)``.
            psd_n (Tensor): complex PSD matrix of noise, ``(..., freq, channel, channel)``.
            reference_channel (int or Tensor): the reference channel (index or one-hot).
            diagonal_loading (bool, optional): diagonal loading of ``psd_n``.
                Default: ``True``.
            diag_eps (float, optional): diagonal loading coefficient. Default: ``1e-7``.
            eps (float, optional): added to the denominator. Default: ``1e-8``.

        Returns:
            Tensor: single-channel complex enhanced spectrum, ``(..., freq, time)``.
        """
        w_mvdr = F.mvdr_weights_souden(psd_s, psd_n, reference_channel, diagonal_loading,
                                       diag_eps, eps)
        return F.apply_beamforming(w_mvdr, specgram)
