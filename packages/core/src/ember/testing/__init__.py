"""Testing utilities, as ``torch.testing``: assert_close and make_tensor."""

from ember.testing._comparison import assert_close
from ember.testing._creation import make_tensor
from ember.testing._deprecated import assert_allclose

__all__ = ["assert_close", "make_tensor", "assert_allclose"]
