"""The layers of ``ember.nn``, one family per file."""

from ember.nn.modules.module import Module

__all__ = ["Module"]

from ember.nn.modules.container import *  # noqa: E402, F403
from ember.nn.modules.container import __all__ as _container_all  # noqa: E402

__all__ += _container_all

from ember.nn.modules.flatten import *  # noqa: E402, F403
from ember.nn.modules.flatten import __all__ as _flatten_all  # noqa: E402

__all__ += _flatten_all

from ember.nn.modules.linear import *  # noqa: E402, F403
from ember.nn.modules.linear import __all__ as _linear_all  # noqa: E402

__all__ += _linear_all

from ember.nn.modules.activation import *  # noqa: E402, F403
from ember.nn.modules.activation import __all__ as _activation_all  # noqa: E402

__all__ += _activation_all

from ember.nn.modules.dropout import *  # noqa: E402, F403
from ember.nn.modules.dropout import __all__ as _dropout_all  # noqa: E402

__all__ += _dropout_all

from ember.nn.modules.sparse import *  # noqa: E402, F403
from ember.nn.modules.sparse import __all__ as _sparse_all  # noqa: E402

__all__ += _sparse_all

from ember.nn.modules.padding import *  # noqa: E402, F403
from ember.nn.modules.padding import __all__ as _padding_all  # noqa: E402

__all__ += _padding_all

from ember.nn.modules.distance import *  # noqa: E402, F403
from ember.nn.modules.distance import __all__ as _distance_all  # noqa: E402

__all__ += _distance_all

from ember.nn.modules.pixelshuffle import *  # noqa: E402, F403
from ember.nn.modules.pixelshuffle import __all__ as _pixelshuffle_all  # noqa: E402

__all__ += _pixelshuffle_all

from ember.nn.modules.channelshuffle import *  # noqa: E402, F403
from ember.nn.modules.channelshuffle import __all__ as _channelshuffle_all  # noqa: E402

__all__ += _channelshuffle_all

from ember.nn.modules.batchnorm import *  # noqa: E402, F403
from ember.nn.modules.batchnorm import __all__ as _batchnorm_all  # noqa: E402

__all__ += _batchnorm_all

from ember.nn.modules.instancenorm import *  # noqa: E402, F403
from ember.nn.modules.instancenorm import __all__ as _instancenorm_all  # noqa: E402

__all__ += _instancenorm_all

from ember.nn.modules.normalization import *  # noqa: E402, F403
from ember.nn.modules.normalization import __all__ as _normalization_all  # noqa: E402

__all__ += _normalization_all

from ember.nn.modules.loss import *  # noqa: E402, F403
from ember.nn.modules.loss import __all__ as _loss_all  # noqa: E402

__all__ += _loss_all

from ember.nn.modules.conv import *  # noqa: E402, F403
from ember.nn.modules.conv import __all__ as _conv_all  # noqa: E402

__all__ += _conv_all

from ember.nn.modules.pooling import *  # noqa: E402, F403
from ember.nn.modules.pooling import __all__ as _pooling_all  # noqa: E402

__all__ += _pooling_all

from ember.nn.modules.fold import *  # noqa: E402, F403
from ember.nn.modules.fold import __all__ as _fold_all  # noqa: E402

__all__ += _fold_all

from ember.nn.modules.upsampling import *  # noqa: E402, F403
from ember.nn.modules.upsampling import __all__ as _upsampling_all  # noqa: E402

__all__ += _upsampling_all

from ember.nn.modules.rnn import *  # noqa: E402, F403
from ember.nn.modules.rnn import __all__ as _rnn_all  # noqa: E402

__all__ += _rnn_all

from ember.nn.modules.transformer import *  # noqa: E402, F403
from ember.nn.modules.transformer import __all__ as _transformer_all  # noqa: E402

__all__ += _transformer_all

from ember.nn.modules.adaptive import *  # noqa: E402, F403
from ember.nn.modules.adaptive import __all__ as _adaptive_all  # noqa: E402

__all__ += _adaptive_all

from ember.nn.modules import lazy, utils  # noqa: E402, F401
from ember.nn.modules.linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: E402

__all__ += ["LinearCrossEntropyOptions"]
