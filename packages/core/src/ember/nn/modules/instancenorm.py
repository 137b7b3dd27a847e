"""Instance normalization layers: InstanceNorm1d/2d/3d and their lazy forms."""

from __future__ import annotations

import warnings

from ember.nn import functional as F
from ember.nn.modules.batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def _get_no_batch_dim(self):
        raise NotImplementedError

    def _handle_no_batch_input(self, input):
        return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)

    def _apply_instance_norm(self, input):
        return F.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        # version 1 removed running_mean and running_var when track_running_stats=False
        if version is None and not self.track_running_stats:
            running_stats_keys = [prefix + name for name in ("running_mean", "running_var")
                                  if prefix + name in state_dict]
            if running_stats_keys:
                klass = self.__class__.__name__
                names = " and ".join(f'"{k}"' for k in running_stats_keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with "
                    "track_running_stats=False. If state_dict is a checkpoint saved before "
                    f"0.4.0, this may be expected because {klass} does not track running "
                    "stats by default since 0.4.0. Please remove these keys from state_dict. "
                    "If the running stats are actually needed, instead set "
                    f"track_running_stats=True in {klass} to enable them. See the "
                    f"documentation of {klass} for details.")
                for key in running_stats_keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features"
                    f" ({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False", stacklevel=2)
        if input.dim() == self._get_no_batch_dim():
            return self._handle_no_batch_input(input)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    r"""Instance normalization over a 3-d input (N, C, L) or an unbatched (C, L).

    Each channel of each sample is normalized over L:
    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias``. Without ``affine``
    (the default) there is no weight nor bias; with ``track_running_stats`` running
    statistics are kept (the batch average of the samples') and used in evaluation.

    Args:
        num_features: C, the number of channels.
        eps: added to the variance for numerical stability. Default: 1e-5.
        momentum: the running statistics' update factor. Default: 0.1.
        affine: whether to learn a weight and bias per channel. Default: False.
        track_running_stats: whether to keep running statistics. Default: False.

    Shape:
        - Input: (N, C, L) or (C, L). Output: the same.
    """

    def _get_no_batch_dim(self):
        return 2

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    r"""Instance normalization over a 4-d input (N, C, H, W) or an unbatched (C, H, W).

    See :class:`InstanceNorm1d` for the arguments.
    """

    def _get_no_batch_dim(self):
        return 3

    def _check_input_dim(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class InstanceNorm3d(_InstanceNorm):
    r"""Instance normalization over a 5-d input (N, C, D, H, W) or an unbatched
    (C, D, H, W).

    See :class:`InstanceNorm1d` for the arguments.
    """

    def _get_no_batch_dim(self):
        return 4

    def _check_input_dim(self, input):
        if input.dim() not in (4, 5):
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")


class _ChannelsOnly:
    """Stands for an input whose dim 1 has ``channels`` entries (for
    ``_LazyNormBase.initialize_parameters``, which reads only that)."""

    def __init__(self, channels):
        self.shape = (None, channels)


def _lazy_instance_norm(regular, name):
    class Lazy(_LazyNormBase, _InstanceNorm):
        cls_to_become = regular

        def initialize_parameters(self, input) -> None:
            """``num_features`` from the channel dim (1, or 0 for an unbatched input:
            PyTorch 2.13 takes dim 1 there too, a spatial size, and then fails in forward);
            materialize and reset."""
            self._check_input_dim(input)
            channels = input.shape[input.dim() - self._get_no_batch_dim()]
            _LazyNormBase.initialize_parameters(self, _ChannelsOnly(channels))

        _check_input_dim = regular._check_input_dim
        _get_no_batch_dim = regular._get_no_batch_dim

    Lazy.__name__ = Lazy.__qualname__ = name
    Lazy.__doc__ = f"""A :class:`{regular.__name__}` whose ``num_features`` is taken from its
    first input (its channel dim); it then becomes a ``{regular.__name__}``.

    Args:
        eps, momentum: as :class:`{regular.__name__}`.
        affine, track_running_stats: as :class:`{regular.__name__}`, but True by default
            (PyTorch's lazy instance norms take the lazy batch norms' defaults).
    """
    return Lazy


LazyInstanceNorm1d = _lazy_instance_norm(InstanceNorm1d, "LazyInstanceNorm1d")
LazyInstanceNorm2d = _lazy_instance_norm(InstanceNorm2d, "LazyInstanceNorm2d")
LazyInstanceNorm3d = _lazy_instance_norm(InstanceNorm3d, "LazyInstanceNorm3d")
