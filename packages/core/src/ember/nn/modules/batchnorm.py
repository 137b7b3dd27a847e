"""Batch normalization layers: BatchNorm1d/2d/3d, their lazy forms and SyncBatchNorm."""

from __future__ import annotations

from ember._dtype import int64
from ember._ops.creation import empty, ones, tensor, zeros
from ember.autograd.grad_mode import no_grad
from ember.nn import functional as F
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Common base of the batch and instance norm layers: the affine parameters and the
    running statistics."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(empty(num_features, **factory_kwargs))
            if bias:
                self.bias = Parameter(empty(num_features, **factory_kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **factory_kwargs))
            self.register_buffer("running_var", ones(num_features, **factory_kwargs))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """The running statistics reset; weight 1 and bias 0 (PyTorch's)."""
        self.reset_running_stats()
        if self.affine:
            with no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (
            "{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
            "bias={use_bias}, track_running_stats={track_running_stats}".format(
                **self.__dict__, use_bias=self.bias is not None))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # version 2 added num_batches_tracked; older checkpoints start it at 0
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked
                                   is not None else tensor(0, dtype=int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)

    def forward(self, input):
        self._check_input_dim(input)
        # momentum None: the cumulative moving average over the batches seen
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                exponential_average_factor = 1.0 / float(self.num_batches_tracked)
            else:
                exponential_average_factor = self.momentum
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_buffers else None,
            self.running_var if use_buffers else None,
            self.weight, self.bias, bn_training, exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    r"""Batch normalization over a 2-d input (N, C) or a 3-d input (N, C, L).

    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias``, the mean and (biased)
    variance taken per channel over the batch (and L). In training the running mean and
    (unbiased) variance are updated with ``momentum`` (None: their cumulative average);
    in evaluation they normalize instead of the batch's statistics.

    Args:
        num_features: C, the number of channels.
        eps: added to the variance for numerical stability. Default: 1e-5.
        momentum: the running statistics' update factor, or None for a cumulative
            moving average. Default: 0.1.
        affine: whether to learn ``weight`` (initialized to 1) and ``bias`` (to 0).
        track_running_stats: whether to keep running statistics (``running_mean``,
            ``running_var``, ``num_batches_tracked`` buffers); without them the batch's
            statistics are used in evaluation mode too.

    Shape:
        - Input: (N, C) or (N, C, L). Output: the same.
    """

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    r"""Batch normalization over a 4-d input (N, C, H, W), per channel.

    See :class:`BatchNorm1d` for the arguments.

    Shape:
        - Input: (N, C, H, W). Output: the same.
    """

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    r"""Batch normalization over a 5-d input (N, C, D, H, W), per channel.

    See :class:`BatchNorm1d` for the arguments.

    Shape:
        - Input: (N, C, D, H, W). Output: the same.
    """

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


# ---------------------------------------------------------------------------
# the lazy forms: num_features from the first input

class _LazyNormBase(LazyModuleMixin, _NormBase):
    """``num_features`` from the first input's dim 1; the parameters and running
    statistics materialized then and reset as the regular layer's."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        # affine and track_running_stats False here: the placeholders below stand in
        super().__init__(0, eps, momentum, False, False, **factory_kwargs, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(**factory_kwargs)
            if bias:
                self.bias = UninitializedParameter(**factory_kwargs)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(**factory_kwargs)
            self.running_var = UninitializedBuffer(**factory_kwargs)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        """``num_features = input.shape[1]``; materialize and reset."""
        if not self.has_uninitialized_params():
            if self.num_features == 0:
                # loaded from a state_dict before the first call (PyTorch 2.13 leaves
                # num_features at 0 there)
                self.num_features = input.shape[1]
            return
        self.num_features = input.shape[1]
        with no_grad():
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm1d` whose ``num_features`` is taken from its first input
    (``input.shape[1]``); it then becomes a ``BatchNorm1d``.

    Args:
        eps, momentum, affine, track_running_stats: as :class:`BatchNorm1d`.
    """

    cls_to_become = BatchNorm1d

    def _check_input_dim(self, input):
        BatchNorm1d._check_input_dim(self, input)


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm2d` whose ``num_features`` is taken from its first input
    (``input.shape[1]``); it then becomes a ``BatchNorm2d``.

    Args:
        eps, momentum, affine, track_running_stats: as :class:`BatchNorm2d`.
    """

    cls_to_become = BatchNorm2d

    def _check_input_dim(self, input):
        BatchNorm2d._check_input_dim(self, input)


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm3d` whose ``num_features`` is taken from its first input
    (``input.shape[1]``); it then becomes a ``BatchNorm3d``.

    Args:
        eps, momentum, affine, track_running_stats: as :class:`BatchNorm3d`.
    """

    cls_to_become = BatchNorm3d

    def _check_input_dim(self, input):
        BatchNorm3d._check_input_dim(self, input)


# ---------------------------------------------------------------------------
# SyncBatchNorm

def _distributed_initialized() -> bool:
    try:
        from ember import distributed
    except ImportError:
        return False
    return bool(distributed.is_available() and distributed.is_initialized())


class SyncBatchNorm(_BatchNorm):
    r"""Batch normalization whose statistics are taken over the whole batch of all the
    processes of a process group (PyTorch's ``SyncBatchNorm``), on (N, C, *) input.

    In training, with an initialized process group of more than one process, each forward
    gathers every process's per-channel mean, variance and count and normalizes with the
    statistics of the whole batch (the running statistics too); backward all-reduces the
    per-channel gradient sums, so the input gradients are those of BatchNorm over the
    whole batch (NOTE [ SyncBatchNorm's two exchanges ] in ``nn/modules/_functions.py``).
    In evaluation, and in one process, it is exactly :class:`BatchNorm1d`/``2d``/``3d``.
    Unlike PyTorch, which wants GPU tensors here, CPU tensors synchronize too (over MPI).

    Args:
        num_features: C, the number of channels.
        eps, momentum, affine, track_running_stats: as :class:`BatchNorm1d`.
        process_group: the group whose processes share the statistics. Default: None
            (the whole world).

    Shape:
        - Input: (N, C, *). Output: the same.

    Examples::

        >>> m = nn.SyncBatchNorm(4)
        >>> m(ember.randn(8, 4, 5, 5)).shape
        ember.Size([8, 4, 5, 5])
        >>> model = nn.SyncBatchNorm.convert_sync_batchnorm(model)   # before DDP
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / self.num_batches_tracked.item()
        bn_training = self.training or (self.running_mean is None
                                        and self.running_var is None)
        running_mean = (self.running_mean if not self.training or self.track_running_stats
                        else None)
        running_var = (self.running_var if not self.training or self.track_running_stats
                       else None)
        need_sync = bn_training and self.training and _distributed_initialized()
        if need_sync:
            from ember import distributed as dist

            group = self.process_group if self.process_group else dist.group.WORLD
            world_size = dist.get_world_size(group)
            need_sync = world_size > 1
        if not need_sync:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias,
                                bn_training, factor, self.eps)
        from ember.nn.modules._functions import SyncBatchNorm as sync_batch_norm

        return sync_batch_norm.apply(input, self.weight, self.bias, running_mean,
                                     running_var, self.eps, factor, group, world_size)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Replace every ``BatchNorm*d`` in ``module`` by a :class:`SyncBatchNorm` sharing
        its parameters and running statistics; returns the converted module (a new one
        when ``module`` itself is a batch norm layer).

        Args:
            module (nn.Module): the module holding batch norm layers.
            process_group (optional): the group of the synchronization. Default: the whole
                world.
        """
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                          module.affine, module.track_running_stats,
                                          process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
