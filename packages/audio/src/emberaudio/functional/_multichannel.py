"""Multi-channel ops: power spectral density matrices, MVDR beamforming weights (Souden's
and the RTF form), relative transfer functions (eigenvector and power method), applying
beamforming weights; and the Frechet distance between two Gaussians.

All of them are compositions of differentiable ember ops (``einsum``, ``linalg.solve``,
``linalg.eigh``), batched over leading dimensions.
"""

from __future__ import annotations

import ember

__all__ = [
    "apply_beamforming", "frechet_distance", "mvdr_weights_rtf", "mvdr_weights_souden", "psd",
    "rtf_evd", "rtf_power",
]


def psd(specgram: ember.Tensor, mask: ember.Tensor | None = None, normalize: bool = True,
        eps: float = 1e-10) -> ember.Tensor:
    r"""Compute the cross-channel power spectral density (PSD) matrix.

    .. math::
        \Phi(f) = \sum_t m(f, t) \textbf{Y}(f, t) \textbf{Y}(f, t)^{\mathsf{H}}

    Args:
        specgram (Tensor): multi-channel complex-valued spectrum,
            ``(..., channel, freq, time)``.
        mask (Tensor or None, optional): time-frequency mask for normalization,
            ``(..., freq, time)``. Default: ``None``.
        normalize (bool, optional): if ``True``, normalize the mask along the time
            dimension. Default: ``True``.
        eps (float, optional): value to add to the denominator in mask normalization.
            Default: ``1e-10``.

    Returns:
        Tensor: the complex-valued PSD matrix of the input spectrum,
        ``(..., freq, channel, channel)``.
    """
    if specgram.ndim < 3:
        raise ValueError(f"Expected at least 3D tensor (..., channel, freq, time) for specgram. "
                         f"Found {tuple(specgram.shape)}.")
    specgram = specgram.transpose(-3, -2)  # (..., freq, channel, time)
    outer = ember.einsum("...ct,...et->...tce", specgram, specgram.conj())
    if mask is not None:
        if mask.shape[:-1] != specgram.shape[:-2] or mask.shape[-1] != specgram.shape[-1]:
            raise ValueError("The dimensions of mask except the channel dimension should be the "
                             f"same as specgram.Found {tuple(mask.shape)} for mask and "
                             f"{tuple(specgram.shape)} for specgram.")
        if normalize:
            mask = mask / (mask.sum(dim=-1, keepdim=True) + eps)
        outer = outer * mask[..., None, None]
    return outer.sum(dim=-3)


def _compute_mat_trace(input: ember.Tensor, dim1: int = -1, dim2: int = -2) -> ember.Tensor:
    if input.ndim < 2:
        raise ValueError("The dimension of the tensor must be at least 2.")
    if input.shape[dim1] != input.shape[dim2]:
        raise ValueError("The size of ``dim1`` and ``dim2`` must be the same.")
    return ember.diagonal(input, 0, dim1=dim1, dim2=dim2).sum(dim=-1)


def _tik_reg(mat: ember.Tensor, reg: float = 1e-7, eps: float = 1e-8) -> ember.Tensor:
    """Tikhonov regularization: ``mat + (reg * trace(mat).real + eps) I``."""
    channels = mat.shape[-1]
    eye = ember.eye(channels, dtype=mat.dtype, device=mat.device)
    epsilon = _compute_mat_trace(mat).real[..., None, None] * reg + eps
    return mat + epsilon * eye


def _assert_psd_matrices(psd_s: ember.Tensor, psd_n: ember.Tensor) -> None:
    if psd_s.ndim < 3 or psd_n.ndim < 3:
        raise ValueError("Expected at least 3D Tensor (..., freq, channel, channel) for psd_s and "
                         f"psd_n. Found {tuple(psd_s.shape)} for psd_s and {tuple(psd_n.shape)} "
                         "for psd_n.")
    if not (psd_s.is_complex() and psd_n.is_complex()):
        raise TypeError("The type of psd_s and psd_n must be ``ember.cfloat`` or "
                        f"``ember.cdouble``. Found {psd_s.dtype} for psd_s and {psd_n.dtype} for "
                        "psd_n.")
    if psd_s.shape != psd_n.shape:
        raise ValueError("The dimensions of psd_s and psd_n should be the same. Found "
                         f"{tuple(psd_s.shape)} and {tuple(psd_n.shape)}.")
    if psd_s.shape[-1] != psd_s.shape[-2]:
        raise ValueError("The last two dimensions of psd_s should be the same. Found "
                         f"{tuple(psd_s.shape)}.")


def _reference(reference_channel, dtype):
    if isinstance(reference_channel, bool) or not isinstance(reference_channel,
                                                             (int, ember.Tensor)):
        raise TypeError('Expected "int" or "Tensor" for reference_channel. Found: '
                        f"{type(reference_channel)}.")
    if isinstance(reference_channel, ember.Tensor):
        return reference_channel.to(dtype)
    return reference_channel


def mvdr_weights_souden(psd_s: ember.Tensor, psd_n: ember.Tensor,
                        reference_channel: int | ember.Tensor, diagonal_loading: bool = True,
                        diag_eps: float = 1e-7, eps: float = 1e-8) -> ember.Tensor:
    r"""Compute the Minimum Variance Distortionless Response (MVDR) beamforming weights by
    the method of Souden et al.:

    .. math::
        \textbf{w}_{\text{MVDR}}(f) = \frac{\Phi_{NN}^{-1}(f) \Phi_{SS}(f)}
        {\text{Trace}(\Phi_{NN}^{-1}(f) \Phi_{SS}(f))} \textbf{u}

    Args:
        psd_s (Tensor): complex PSD matrix of target speech, ``(..., freq, channel, channel)``.
        psd_n (Tensor): complex PSD matrix of noise, ``(..., freq, channel, channel)``.
        reference_channel (int or Tensor): the reference channel index, or a one-hot
            tensor ``(..., channel)``.
        diagonal_loading (bool, optional): apply diagonal loading to ``psd_n``.
            Default: ``True``.
        diag_eps (float, optional): the coefficient of the identity in diagonal loading.
            Default: ``1e-7``.
        eps (float, optional): value added to the denominator. Default: ``1e-8``.

    Returns:
        Tensor: the complex MVDR beamforming weight matrix, ``(..., freq, channel)``.
    """
    _assert_psd_matrices(psd_s, psd_n)
    reference = _reference(reference_channel, psd_n.dtype)
    if diagonal_loading:
        psd_n = _tik_reg(psd_n, reg=diag_eps)
    numerator = ember.linalg.solve(psd_n, psd_s)
    ws = numerator / (_compute_mat_trace(numerator)[..., None, None] + eps)
    if isinstance(reference, int):
        return ws[..., :, reference]
    return ember.einsum("...c,...c->...", ws, reference[..., None, None, :])


def mvdr_weights_rtf(rtf: ember.Tensor, psd_n: ember.Tensor,
                     reference_channel: int | ember.Tensor | None = None,
                     diagonal_loading: bool = True, diag_eps: float = 1e-7, eps: float = 1e-8
                     ) -> ember.Tensor:
    r"""Compute the MVDR beamforming weights from the relative transfer function (RTF) and
    the PSD matrix of noise:

    .. math::
        \textbf{w}_{\text{MVDR}}(f) = \frac{\Phi_{NN}^{-1}(f) \bm{v}(f)}
        {\bm{v}^{\mathsf{H}}(f) \Phi_{NN}^{-1}(f) \bm{v}(f)}

    Args:
        rtf (Tensor): complex RTF vector of target speech, ``(..., freq, channel)``.
        psd_n (Tensor): complex PSD matrix of noise, ``(..., freq, channel, channel)``.
        reference_channel (int, Tensor or None, optional): the reference channel index or a
            one-hot tensor ``(..., channel)``; the weights are scaled by the conjugate RTF of
            that channel. Default: ``None``.
        diagonal_loading (bool, optional): apply diagonal loading to ``psd_n``.
            Default: ``True``.
        diag_eps (float, optional): the coefficient of the identity in diagonal loading.
            Default: ``1e-7``.
        eps (float, optional): value added to the denominator. Default: ``1e-8``.

    Returns:
        Tensor: the complex MVDR beamforming weight matrix, ``(..., freq, channel)``.
    """
    if rtf.ndim < 2:
        raise ValueError(f"Expected at least 2D Tensor (..., freq, channel) for rtf. Found "
                         f"{tuple(rtf.shape)}.")
    if psd_n.ndim < 3:
        raise ValueError("Expected at least 3D Tensor (..., freq, channel, channel) for psd_n. "
                         f"Found {tuple(psd_n.shape)}.")
    if not (rtf.is_complex() and psd_n.is_complex()):
        raise TypeError("The type of rtf and psd_n must be ``ember.cfloat`` or ``ember.cdouble``. "
                        f"Found {rtf.dtype} for rtf and {psd_n.dtype} for psd_n.")
    if rtf.shape != psd_n.shape[:-1]:
        raise ValueError("The dimensions of rtf and the dimensions without the last dimension of "
                         f"psd_n should be the same. Found {tuple(rtf.shape)} for rtf and "
                         f"{tuple(psd_n.shape)} for psd_n.")
    if psd_n.shape[-1] != psd_n.shape[-2]:
        raise ValueError("The last two dimensions of psd_n should be the same. Found "
                         f"{tuple(psd_n.shape)}.")
    reference = None if reference_channel is None else _reference(reference_channel,
                                                                  psd_n.dtype)
    if diagonal_loading:
        psd_n = _tik_reg(psd_n, reg=diag_eps)
    numerator = ember.linalg.solve(psd_n, rtf.unsqueeze(-1)).squeeze(-1)
    denominator = ember.einsum("...d,...d->...", rtf.conj(), numerator)
    weights = numerator / (denominator.real.unsqueeze(-1) + eps)
    if reference is not None:
        if isinstance(reference, int):
            scale = rtf[..., reference].conj()
        else:
            scale = ember.einsum("...c,...c->...", rtf.conj(), reference[..., None, :])
        weights = weights * scale[..., None]
    return weights


def rtf_evd(psd_s: ember.Tensor) -> ember.Tensor:
    r"""Estimate the relative transfer function (RTF) or the steering vector by eigenvalue
    decomposition: the eigenvector of the largest eigenvalue of ``psd_s``.

    Args:
        psd_s (Tensor): complex PSD matrix of target speech, ``(..., freq, channel, channel)``.

    Returns:
        Tensor: the estimated complex RTF of target speech, ``(..., freq, channel)``.
    """
    if not psd_s.is_complex():
        raise TypeError("The type of psd_s must be ``ember.cfloat`` or ``ember.cdouble``. Found "
                        f"{psd_s.dtype}.")
    if psd_s.ndim < 2 or psd_s.shape[-1] != psd_s.shape[-2]:
        raise ValueError("The last two dimensions of psd_s should be the same. Found "
                         f"{tuple(psd_s.shape)}.")
    _, v = ember.linalg.eigh(psd_s)  # ascending eigenvalues
    return v[..., -1]


def rtf_power(psd_s: ember.Tensor, psd_n: ember.Tensor, reference_channel: int | ember.Tensor,
              n_iter: int = 3, diagonal_loading: bool = True, diag_eps: float = 1e-7
              ) -> ember.Tensor:
    r"""Estimate the relative transfer function (RTF) or the steering vector by the power
    method on :math:`\Phi_{NN}^{-1} \Phi_{SS}`.

    Args:
        psd_s (Tensor): complex PSD matrix of target speech, ``(..., freq, channel, channel)``.
        psd_n (Tensor): complex PSD matrix of noise, ``(..., freq, channel, channel)``.
        reference_channel (int or Tensor): the reference channel index, or a one-hot
            tensor ``(..., channel)``.
        n_iter (int, optional): number of iterations of the power method. Default: ``3``.
        diagonal_loading (bool, optional): apply diagonal loading to ``psd_n``.
            Default: ``True``.
        diag_eps (float, optional): the coefficient of the identity in diagonal loading.
            Default: ``1e-7``.

    Returns:
        Tensor: the estimated complex RTF of target speech, ``(..., freq, channel)``.
    """
    _assert_psd_matrices(psd_s, psd_n)
    if n_iter <= 0:
        raise ValueError("The number of iteration must be greater than 0.")
    reference = _reference(reference_channel, psd_n.dtype)
    if diagonal_loading:
        psd_n = _tik_reg(psd_n, reg=diag_eps)
    phi = ember.linalg.solve(psd_n, psd_s)
    if isinstance(reference, int):
        rtf = phi[..., reference]
    else:
        rtf = ember.einsum("...c,...c->...", phi, reference[..., None, None, :])
    rtf = rtf.unsqueeze(-1)
    if n_iter >= 2:
        # phi itself and the final multiplication by psd_s count as two iterations
        for _ in range(n_iter - 2):
            rtf = ember.matmul(phi, rtf)
        rtf = ember.matmul(psd_s, rtf)
    else:
        rtf = ember.matmul(psd_n, rtf)
    return rtf.squeeze(-1)


def apply_beamforming(beamform_weights: ember.Tensor, specgram: ember.Tensor) -> ember.Tensor:
    r"""Apply the beamforming weights to the multi-channel noisy spectrum to obtain the
    single-channel enhanced spectrum:
    :math:`\hat{\textbf{S}}(f) = \textbf{w}_{\text{bf}}(f)^{\mathsf{H}} \textbf{Y}(f)`.

    Args:
        beamform_weights (Tensor): complex beamforming weight matrix, ``(..., freq, channel)``.
        specgram (Tensor): multi-channel complex noisy spectrum,
            ``(..., channel, freq, time)``.

    Returns:
        Tensor: the single-channel complex enhanced spectrum, ``(..., freq, time)``.
    """
    if beamform_weights.ndim < 2 or specgram.ndim < 3 \
            or beamform_weights.shape[:-2] != specgram.shape[:-3]:
        raise ValueError("The dimensions except the last two dimensions of beamform_weights "
                         "should be the same as the dimensions except the last three dimensions "
                         f"of specgram. Found {tuple(beamform_weights.shape)} for "
                         f"beamform_weights and {tuple(specgram.shape)} for specgram.")
    if not (beamform_weights.is_complex() and specgram.is_complex()):
        raise TypeError("The type of beamform_weights and specgram must be ``ember.cfloat`` or "
                        f"``ember.cdouble``. Found {beamform_weights.dtype} for beamform_weights "
                        f"and {specgram.dtype} for specgram.")
    return ember.einsum("...fc,...cft->...ft", beamform_weights.conj(), specgram)


def frechet_distance(mu_x: ember.Tensor, sigma_x: ember.Tensor, mu_y: ember.Tensor,
                     sigma_y: ember.Tensor) -> ember.Tensor:
    r"""Compute the Frechet distance between two multivariate normal distributions:

    .. math::
        F(X, Y) = || \mu_X - \mu_Y ||_2^2
        + \text{Tr}\left( \Sigma_X + \Sigma_Y - 2 \sqrt{\Sigma_X \Sigma_Y} \right)

    Args:
        mu_x (Tensor): mean of :math:`X`, ``(N,)``.
        sigma_x (Tensor): covariance matrix of :math:`X`, ``(N, N)``.
        mu_y (Tensor): mean of :math:`Y`, ``(N,)``.
        sigma_y (Tensor): covariance matrix of :math:`Y`, ``(N, N)``.

    Returns:
        Tensor: the Frechet distance between :math:`X` and :math:`Y`.
    """
    if mu_x.ndim != 1:
        raise ValueError(f"Input mu_x must be one-dimensional; got dimension {mu_x.ndim}.")
    if sigma_x.ndim != 2:
        raise ValueError(f"Input sigma_x must be two-dimensional; got dimension {sigma_x.ndim}.")
    if sigma_x.shape[0] != sigma_x.shape[1] or sigma_x.shape[0] != mu_x.shape[0]:
        raise ValueError("Each of sigma_x's dimensions must match mu_x's size.")
    if mu_x.shape != mu_y.shape:
        raise ValueError(f"Inputs mu_x and mu_y must have the same shape; got "
                         f"{tuple(mu_x.shape)} and {tuple(mu_y.shape)}.")
    if sigma_x.shape != sigma_y.shape:
        raise ValueError(f"Inputs sigma_x and sigma_y must have the same shape; got "
                         f"{tuple(sigma_x.shape)} and {tuple(sigma_y.shape)}.")
    a = (mu_x - mu_y).square().sum()
    b = sigma_x.trace() + sigma_y.trace()
    c = ember.linalg.eigvals(sigma_x @ sigma_y).sqrt().real.sum()
    return a + b - 2 * c
