"""BLEU, as ``torchtext.data.metrics`` computes it."""

import collections
import math

import numpy

from embertext.data.utils import ngrams_iterator

__all__ = ["bleu_score"]


def _compute_ngram_counter(tokens, max_n):
    """A Counter of the n-grams (as tuples) of ``tokens`` for n = 1 .. max_n."""
    return collections.Counter(tuple(gram.split(" ")) for gram in ngrams_iterator(tokens, max_n))


def bleu_score(candidate_corpus, references_corpus, max_n=4, weights=[0.25] * 4):  # noqa: B006
    r"""The BLEU score of a corpus of candidate translations against their references.

    Papineni et al., 2002: the geometric mean of the clipped n-gram precisions for
    n = 1 .. ``max_n``, weighted by ``weights``, times the brevity penalty, for the whole
    corpus at once. The precisions are computed in float32, as torchtext does.

    Args:
        candidate_corpus: the candidate translations, each an iterable of tokens.
        references_corpus: for each candidate, an iterable of reference translations, each
            an iterable of tokens.
        max_n (int): the largest n-gram order. Default: 4.
        weights: one weight per n-gram order (``len(weights) == max_n``). Default: uniform.

    Returns:
        float: the score in [0, 1]; 0.0 when some order has no matching n-gram.

    Examples::

        >>> candidate_corpus = [["My", "full", "pytorch", "test"], ["Another", "Sentence"]]
        >>> references_corpus = [[["My", "full", "pytorch", "test"], ["Completely", "Different"]],
        ...                      [["No", "Match"]]]
        >>> bleu_score(candidate_corpus, references_corpus)
        0.8408964276313782
    """
    if max_n != len(weights):
        raise AssertionError('Length of the "weights" list has be equal to max_n')
    if len(candidate_corpus) != len(references_corpus):
        raise AssertionError("The length of candidate and reference corpus should be the same")

    clipped_counts = [0] * max_n
    total_counts = [0] * max_n
    candidate_len = 0.0
    refs_len = 0.0
    for candidate, refs in zip(candidate_corpus, references_corpus):
        current_len = len(candidate)
        candidate_len += current_len
        # The reference closest in length to the candidate sets the brevity penalty.
        refs_len += min((float(len(ref)) for ref in refs), key=lambda x: abs(current_len - x))

        reference_counter = _compute_ngram_counter(refs[0], max_n)
        for ref in refs[1:]:
            reference_counter |= _compute_ngram_counter(ref, max_n)
        clipped = _compute_ngram_counter(candidate, max_n) & reference_counter
        for gram, count in clipped.items():
            clipped_counts[len(gram) - 1] += count
        for i in range(max_n):
            # A candidate of T tokens has T - (n - 1) n-grams.
            total_counts[i] += max(current_len - i, 0)

    if min(clipped_counts) == 0:
        return 0.0
    # NOTE [ float32 BLEU ]
    # torchtext computes the precisions, their logs, the weighted sum and its exp in float32
    # tensors. Each step here is done in float64 and rounded to float32: correctly rounded,
    # which PyTorch's float32 log and exp are nearly always (its scores agree to about 1e-7
    # relative, most of them exactly; NumPy's float32 exp is further off).
    f32 = numpy.float32
    total = f32(0.0)
    for weight, clipped, count in zip(weights, clipped_counts, total_counts):
        precision = f32(clipped) / f32(count)
        total = f32(total + f32(weight) * f32(math.log(precision)))
    score = f32(math.exp(total))
    brevity_penalty = math.exp(min(1 - refs_len / candidate_len, 0))
    return brevity_penalty * float(score)
