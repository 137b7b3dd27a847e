"""Functions on token sequences and batches (``torchtext.functional``).

A *sequence* is a list of ints or a list of strs; a *batch* is a list of sequences. Other
types (tuples, mixed lists) are refused with ``TypeError``, as in torchtext.
"""

import ember
from ember.nn.utils.rnn import pad_sequence

__all__ = ["to_tensor", "truncate", "add_token", "str_to_int"]


def _is_list_of(obj, kind):
    # An empty list is a list of anything, as for torch.jit.isinstance in eager mode.
    return isinstance(obj, list) and all(isinstance(item, kind) for item in obj)


def _is_batch_of(obj, kind):
    return isinstance(obj, list) and all(_is_list_of(item, kind) for item in obj)


def to_tensor(input, padding_value=None, dtype=ember.long):
    r"""Turn a sequence or a batch of token ids into a tensor.

    Args:
        input: a list of ints, or a list of lists of ints.
        padding_value (int, optional): pad the sequences of a batch at the end to the length
            of the longest; without it they must be of one length.
        dtype (ember.dtype): the dtype of a batch's tensor. Default: ``ember.long``.

    .. note:: a single sequence always gives an int64 tensor, whatever ``dtype`` says, as in
       torchtext 0.18.

    Shape:
        - Output: :math:`(L)` for a sequence, :math:`(B, L)` for a batch.

    Examples::

        >>> to_tensor([[1, 2], [3]], padding_value=0)
        tensor([[1, 2],
                [3, 0]])
    """
    if _is_list_of(input, int):
        return ember.tensor(input, dtype=ember.long)
    if _is_batch_of(input, int):
        if padding_value is None:
            return ember.tensor(input, dtype=dtype)
        return pad_sequence([ember.tensor(ids, dtype=dtype) for ids in input], batch_first=True,
                            padding_value=float(padding_value))
    raise TypeError("Input type not supported")


def truncate(input, max_seq_len):
    r"""Keep the first ``max_seq_len`` tokens of a sequence, or of each sequence of a batch.

    Examples::

        >>> truncate([[1, 2, 3], [4]], 2)
        [[1, 2], [4]]
    """
    if _is_list_of(input, int) or _is_list_of(input, str):
        return input[:max_seq_len]
    if _is_batch_of(input, int) or _is_batch_of(input, str):
        return [ids[:max_seq_len] for ids in input]
    raise TypeError("Input type not supported")


def add_token(input, token_id, begin=True):
    r"""Add ``token_id`` at the start (``begin=True``) or the end of a sequence or of each
    sequence of a batch. The token must be of the sequences' type (int or str).

    Examples::

        >>> add_token([[1, 2], [3]], 0)
        [[0, 1, 2], [0, 3]]
    """
    for kind in (int, str):
        if not isinstance(token_id, kind):
            continue
        if _is_list_of(input, kind):
            return [token_id, *input] if begin else [*input, token_id]
        if _is_batch_of(input, kind):
            return [[token_id, *ids] if begin else [*ids, token_id] for ids in input]
    raise TypeError("Input type not supported")


def str_to_int(input):
    r"""Convert the string tokens of a sequence or a batch to ints.

    Examples::

        >>> str_to_int(["1", "22"])
        [1, 22]
    """
    if _is_list_of(input, str):
        return [int(token) for token in input]
    if _is_batch_of(input, str):
        return [[int(token) for token in ids] for ids in input]
    raise TypeError("Input type not supported")
