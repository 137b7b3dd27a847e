"""T5's input transform (``torchtext.models.T5Transform``): SentencePiece ids, truncated,
with the end-of-sequence id, padded into a tensor."""

from ember import nn
from embertext import functional as F
from embertext import transforms as T
from embertext.data.functional import load_sp_model
from embertext.utils import get_asset_local_path

__all__ = ["T5Transform"]


class T5Transform(nn.Module):
    r"""Tokenize text for T5 with a pre-trained SentencePiece model: ids truncated to
    ``max_seq_len - 1``, then ``eos_idx`` appended, and a batch padded with ``padding_idx``.

    Args:
        sp_model_path (str): the path (or URL) of the SentencePiece ``.model`` file.
        max_seq_len (int): the most ids of each text, the end-of-sequence id included.
        eos_idx (int): the end-of-sequence id.
        padding_idx (int): the padding id.

    Examples::

        >>> transform = T5Transform("spm_model", max_seq_len=10, eos_idx=1, padding_idx=0)
        >>> transform(["hello world", "attention is all you need!"])
    """

    def __init__(self, sp_model_path, max_seq_len, eos_idx, padding_idx):
        super().__init__()
        self.sp_model = load_sp_model(get_asset_local_path(sp_model_path))
        self.max_seq_len = max_seq_len
        self.eos_idx = eos_idx
        self.padding_idx = padding_idx
        # max_seq_len counts the end-of-sequence id, as in torchtext
        self.pipeline = T.Sequential(T.Truncate(self.max_seq_len - 1),
                                     T.AddToken(token=self.eos_idx, begin=False))

    def forward(self, input):
        """A long tensor of ids: ``(length,)`` for a string, ``(batch, longest)`` for a list."""
        return F.to_tensor(self.pipeline(self.encode(input)), padding_value=self.padding_idx)

    def encode(self, input):
        """The ids of a string, or of each string of a list."""
        if F._is_list_of(input, str):
            return [self.sp_model.EncodeAsIds(text) for text in input]
        if isinstance(input, str):
            return self.sp_model.EncodeAsIds(input)
        raise TypeError("Input type not supported")

    def decode(self, input):
        """The text of a list of ids, or of each list of a batch."""
        if F._is_batch_of(input, int):
            return [self.sp_model.DecodeIds(ids) for ids in input]
        if F._is_list_of(input, int):
            return self.sp_model.DecodeIds(input)
        raise TypeError("Input type not supported")
