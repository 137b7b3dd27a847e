"""The Unigram language-model training of SentencePiece (Kudo, 2018), step for step as
Hugging Face's ``UnigramTrainer`` does it: seed pieces from a suffix array (the repeated
substrings of the corpus), EM rounds (a Bayesian M-step with the digamma function), and
pruning of the pieces whose removal costs the least likelihood, until the vocabulary is a
little larger than asked; then the required characters are added and the rest cut.

Words are ``(text, count)`` pairs (the pre-tokenized words of the corpus). Id 0 of the
pieces is the unknown piece during training, as in the reference.
"""

import math

import numpy as np

from embertext.tokenizers import _kernels

__all__ = ["train_unigram", "seed_pieces", "e_step"]

_UNK_PENALTY = 10.0
_TRAINING_UNK = "<UNK>"


def digamma(x):
    """The digamma function by its asymptotic series (as the reference computes it)."""
    result = 0.0
    while x < 7.0:
        result -= 1.0 / x
        x += 1.0
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += (math.log(x) + xx2 / 24.0 - 7.0 / 960.0 * xx4 + 31.0 / 8064.0 * xx4 * xx2
               - 127.0 / 30720.0 * xx4 * xx4)
    return result


def _log_sum_exp(x, y):
    low, high = (y, x) if x > y else (x, y)
    if high > low + 50.0:
        return high
    return high + math.log(math.exp(low - high) + 1.0)


def _suffix_array(codes):
    """The suffix array of an int array, by prefix doubling (NumPy sorts)."""
    n = len(codes)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    rank = np.unique(codes, return_inverse=True)[1].astype(np.int64)
    k = 1
    while True:
        second = np.full(n, -1, dtype=np.int64)
        if k < n:
            second[:-k] = rank[k:]
        order = np.lexsort((second, rank))
        keys = np.stack([rank[order], second[order]])
        changed = np.ones(n, dtype=np.int64)
        changed[1:] = np.any(keys[:, 1:] != keys[:, :-1], axis=0)
        new_rank = np.empty(n, dtype=np.int64)
        new_rank[order] = np.cumsum(changed) - 1
        rank = new_rank
        if rank.max() == n - 1:
            return order
        k *= 2


def _repeated_substrings(codes):
    """``(start, length, count)`` of every internal node of the suffix tree of ``codes``
    (a substring seen at least twice whose occurrences are not all followed by the same
    character), from the LCP intervals of the suffix array."""
    n = len(codes)
    sa = _suffix_array(np.asarray(codes, dtype=np.int64)).tolist()
    rank = [0] * n
    for i, s in enumerate(sa):
        rank[s] = i
    lcp = [0] * n  # lcp[i]: of suffixes sa[i - 1] and sa[i]
    h = 0
    for i in range(n):
        r = rank[i]
        if r == 0:
            h = 0
            continue
        j = sa[r - 1]
        while i + h < n and j + h < n and codes[i + h] == codes[j + h]:
            h += 1
        lcp[r] = h
        if h:
            h -= 1
    out = []
    stack = [(0, 0)]  # (left boundary, depth)
    for i in range(1, n + 1):
        depth = lcp[i] if i < n else 0
        left = i - 1
        while stack[-1][1] > depth:
            left, d = stack.pop()
            out.append((sa[left], d, i - left))
        if stack[-1][1] < depth:
            stack.append((left, depth))
    return out


def seed_pieces(words, max_piece_length, seed_size=1_000_000):
    """The seed vocabulary: every character (scored by its count) then the repeated
    substrings of 2 to ``max_piece_length`` characters inside words (scored by occurrences
    in distinct words times length), as log-probabilities."""
    char_counts = {}
    codes = []
    for word, count in words:
        for char in word:
            if char != "\0":
                char_counts[char] = char_counts.get(char, 0) + count
        codes.extend(map(ord, word))
        codes.append(0)  # the word boundary
    seeds = [(char, float(count)) for count, char in
             sorted(((count, char) for char, count in char_counts.items()), reverse=True)]
    flat = "".join(map(chr, codes))
    substrings = []
    for start, length, count in _repeated_substrings(codes):
        if length <= 1 or length > max_piece_length:
            continue
        text = flat[start:start + length]
        if "\0" in text:
            continue
        substrings.append((count * length, text))
    substrings.sort(reverse=True)
    for score, text in substrings:
        if len(seeds) >= seed_size:
            break
        seeds.append((text, float(score)))
    if not seeds:
        return []
    total = math.log(sum(score for _, score in seeds))
    return [(piece, math.log(score) - total) for piece, score in seeds]


class _Lattice:
    """The pieces of a model as a dict, for the lattices of words: node lists in the
    reference's order (by start, shorter pieces first, the unknown node last)."""

    def __init__(self, pieces):
        self.index = {}
        for i, (piece, _) in enumerate(pieces):
            if i and piece not in self.index:
                self.index[piece] = i
        self.scores = [score for _, score in pieces]
        finite = [s for s in self.scores[1:] if not math.isnan(s)]
        self.unk_score = (min(finite) if finite else 0.0) - _UNK_PENALTY
        self.max_length = max((len(p) for p in self.index), default=1)

    def nodes(self, word):
        """``(start, end, id, score)`` of every node of ``word``'s lattice."""
        index, scores, limit = self.index, self.scores, self.max_length
        n = len(word)
        out = []
        for start in range(n):
            single = False
            for end in range(start + 1, min(n, start + limit) + 1):
                i = index.get(word[start:end])
                if i is not None:
                    out.append((start, end, i, scores[i]))
                    single = single or end == start + 1
            if not single:
                out.append((start, start + 1, 0, self.unk_score))
        return out

    def kernel(self):
        """The compiled Viterbi search over these pieces (id 0: the unknown piece)."""
        return _kernels.UnigramKernel([(p, i, self.scores[i]) for p, i in self.index.items()],
                                      self.unk_score, True)


def _marginals(nodes, n, freq, expected):
    """Forward-backward over one word's lattice: adds ``freq`` times each node's marginal
    probability to ``expected[id]``; returns ``freq * log Z``."""
    count = len(nodes)
    ends = [[] for _ in range(n + 1)]
    begins = [[] for _ in range(n + 1)]
    for k, (start, end, _, _) in enumerate(nodes):
        begins[start].append(k)
        ends[end].append(k)
    alpha = [0.0] * count
    for k, (start, _, _, _) in enumerate(nodes):
        if start == 0:
            continue
        value = None
        for j in ends[start]:
            term = nodes[j][3] + alpha[j]
            value = term if value is None else _log_sum_exp(value, term)
        alpha[k] = value
    beta = [0.0] * count
    z = None
    for j in ends[n]:
        term = nodes[j][3] + alpha[j]
        z = term if z is None else _log_sum_exp(z, term)
    for pos in range(n - 1, 0, -1):
        for j in ends[pos]:
            value = None
            for k in begins[pos]:
                term = nodes[k][3] + beta[k]
                value = term if value is None else _log_sum_exp(value, term)
            beta[j] = value
    for k, (_, _, i, score) in enumerate(nodes):
        expected[i] += freq * math.exp(alpha[k] + score + beta[k] - z)
    return freq * z


def e_step(pieces, words):
    """The objective (the negative log-likelihood per word) and the expected count of each
    piece over ``words`` (compiled: ``_kernels.UnigramKernel.e_step``)."""
    words = [(word, count) for word, count in words if word]
    return _Lattice(pieces).kernel().e_step([w for w, _ in words], [c for _, c in words],
                                            len(pieces), 0)


def e_step_python(pieces, words):
    """:func:`e_step` in Python: the reference the compiled E-step is tested against."""
    lattice = _Lattice(pieces)
    expected = [0.0] * len(pieces)
    total = sum(count for _, count in words)
    objective = 0.0
    for word, count in words:
        if word:
            objective -= _marginals(lattice.nodes(word), len(word), count, expected) / total
    return objective, expected


def _m_step(pieces, expected):
    kept = [(pieces[0][0], math.nan)]
    total = 0.0
    for i in range(1, len(pieces)):
        if expected[i] < 0.5:
            continue
        kept.append((pieces[i][0], expected[i]))
        total += expected[i]
    logsum = digamma(total)
    return [kept[0]] + [(piece, digamma(freq) - logsum) for piece, freq in kept[1:]]


def _second_best(lattice, piece):
    """The best segmentation of ``piece`` into two or more nodes: ``(score, ids)``."""
    nodes = [node for node in lattice.nodes(piece) if node[1] - node[0] < len(piece)]
    n = len(piece)
    best = [None] * (n + 1)
    best[0] = (0.0, ())
    for start, end, i, score in nodes:  # sorted by start
        if best[start] is None:
            continue
        value = best[start][0] + score
        if best[end] is None or value > best[end][0]:
            best[end] = (value, best[start][1] + (i,))
    return best[n]


def _prune(pieces, words, vocab_size, shrinking_factor):
    lattice = _Lattice(pieces)
    always_keep = [True] * len(pieces)
    alternatives = [()] * len(pieces)
    for i in range(1, len(pieces)):
        piece, score = pieces[i]
        if len(piece) == 1:
            continue  # its only segmentation
        second = _second_best(lattice, piece)
        if second is None:
            continue
        if second[0] > score:
            always_keep[i] = False
        else:
            alternatives[i] = second[1]

    kernel = lattice.kernel()
    freq = [0.0] * len(pieces)
    inverted = [[] for _ in pieces]
    total_count = 0.0
    for w, (word, count) in enumerate(words):
        total_count += count
        if not word:
            continue
        for i, _, _ in kernel.segment(word):
            i = 0 if i is None else i
            freq[i] += count
            inverted[i].append(w)
    total = sum(freq)
    logsum = math.log(total)
    # NOTE [ The reference's alternatives count ]
    # Hugging Face's trainer weighs the removed piece's frequency by the number of pieces
    # minus one (``alternatives.len() - 1``) where SentencePiece uses the number of
    # alternatives; the reference's vocabulary is the one to match, so its rule stands.
    logsum_alt = [math.log(total + f * (len(pieces) - 1)) for f in freq]
    kept = [pieces[0]]
    candidates = []
    for i in range(1, len(pieces)):
        if freq[i] == 0.0 and not always_keep[i]:
            continue
        if not alternatives[i]:
            kept.append(pieces[i])
            continue
        f = sum(words[w][1] for w in inverted[i])
        if f == 0.0:
            continue
        f /= total_count
        logprob = math.log(freq[i]) - logsum
        logprob_alt = sum(math.log(freq[j] + freq[i]) - logsum_alt[i] for j in alternatives[i])
        candidates.append((i, f * (logprob - logprob_alt)))
    pruned_size = max(vocab_size * 11 // 10, int(len(pieces) * shrinking_factor))
    candidates.sort(key=lambda item: item[1], reverse=True)
    for i, _ in candidates:
        if len(kept) == pruned_size:
            break
        kept.append(pieces[i])
    return kept


def _finalize(pieces, required_chars, vocab_size, special_tokens, unk_token):
    finite = [score for _, score in pieces[1:] if not math.isnan(score)]
    min_score = min(finite) if finite else 0.0
    existing = dict(pieces[1:])
    out = []
    inserted = {_TRAINING_UNK}
    penalty = 0.0
    for char in sorted(required_chars):
        inserted.add(char)
        if char in existing:
            out.append((char, existing[char]))
        else:
            out.append((char, min_score + penalty))
            penalty += 0.0001
    if unk_token is not None and unk_token in special_tokens:
        unk_id, add_unk = special_tokens.index(unk_token), False
    else:
        unk_id, add_unk = (0, True) if unk_token is not None else (None, False)
    # The special tokens (and an added unknown token) count in the vocabulary size.
    limit = vocab_size - len(special_tokens) - int(add_unk)
    for piece, score in pieces:
        if piece in inserted:
            continue
        inserted.add(piece)
        out.append((piece, 0.0 if math.isnan(score) else score))
        if len(out) == limit:
            break
    out.sort(key=lambda item: item[1], reverse=True)
    specials = [(token, 0.0) for token in special_tokens]
    if add_unk:
        specials.insert(0, (unk_token, 0.0))
    return specials + out, unk_id


def train_unigram(words, vocab_size=8000, n_sub_iterations=2, shrinking_factor=0.75,
                  special_tokens=(), unk_token=None, max_piece_length=16, initial_alphabet=(),
                  seed_size=1_000_000, progress=None):
    """``(pieces, unk_id, objective)``: the trained ``(piece, log-probability)`` list, the
    unknown token's id, and the last E-step's objective (negative log-likelihood per word).
    """
    words = [(word, count) for word, count in words if count > 0]
    required = {char for word, _ in words for char in word} | set(initial_alphabet)
    if len(required) > vocab_size:
        raise ValueError(f"The vocabulary is not large enough to contain all chars: "
                         f"vocab_size={vocab_size}, {len(required)} characters")
    pieces = [(_TRAINING_UNK, math.nan)] + seed_pieces(words, max_piece_length, seed_size)
    desired = vocab_size * 11 // 10
    objective = math.nan
    while words:  # no words (an empty corpus): only the special tokens and the alphabet
        for _ in range(n_sub_iterations):
            objective, expected = e_step(pieces, words)
            pieces = _m_step(pieces, expected)
            if progress is not None:
                progress.update(1)
        if len(pieces) <= desired:
            break
        pruned = _prune(pieces, words, vocab_size, shrinking_factor)
        if len(pruned) == len(pieces):
            break  # nothing more can go (every piece left is kept whatever its loss)
        pieces = pruned
    out, unk_id = _finalize(pieces, required, vocab_size, list(special_tokens), unk_token)
    return out, unk_id, objective
