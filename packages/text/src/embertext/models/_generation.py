"""Token-by-token decoding shared by the generative models: greedy search, top-k and
top-p (nucleus) sampling on a key / value cache, stopping at an end-of-sequence id."""

import ember
from ember.nn import functional as F

__all__: list[str] = []


def decode(step, tokens, step_input, max_new_tokens=20, do_sample=False, temperature=1.0,
           top_k=None, top_p=None, eos_token_id=None, pad_token_id=None, generator=None):
    r"""Append up to ``max_new_tokens`` tokens to ``tokens`` (B, L).

    ``step(step_input, past)`` runs the model on the new tokens and returns the logits of the
    last position (B, V) and the cache for the next call (``past`` is None the first time).
    A sequence that produced ``eos_token_id`` stops: it is padded with ``pad_token_id``
    (``eos_token_id`` when None) from then on, and generation ends when all have stopped.
    """
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    if pad_token_id is None:
        pad_token_id = eos_token_id
    past = None
    done = ember.zeros(tokens.shape[0], dtype=ember.bool)
    for _ in range(max_new_tokens):
        logits, past = step(step_input, past)
        logits = logits.to(ember.float32)
        if do_sample:
            next_token = sample(logits / temperature, top_k, top_p, generator)
        else:
            next_token = logits.argmax(-1)
        if eos_token_id is not None:
            next_token = ember.where(done, ember.full_like(next_token, pad_token_id),
                                     next_token)
            done = done | (next_token == eos_token_id)
        tokens = ember.cat([tokens, next_token[:, None]], dim=1)
        step_input = next_token[:, None]
        if eos_token_id is not None and bool(done.all()):
            break
    return tokens


def sample(logits, top_k, top_p, generator):
    """One token per row of ``logits`` (B, V), drawn among the ``top_k`` most likely and / or
    the smallest set whose probability reaches ``top_p``."""
    if top_k is not None:
        if top_k <= 0:
            raise ValueError(f"top_k must be positive, got {top_k}")
        kth = ember.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None:
        if not 0 < top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}")
        sorted_logits, order = ember.sort(logits, descending=True, dim=-1)
        cumulative = F.softmax(sorted_logits, dim=-1).cumsum(-1)
        # Keep the smallest set whose probability reaches top_p (the first token always).
        remove = cumulative - F.softmax(sorted_logits, dim=-1) >= top_p
        sorted_logits = sorted_logits.masked_fill(remove, float("-inf"))
        logits = ember.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)
    probs = F.softmax(logits, dim=-1)
    return ember.multinomial(probs, 1, generator=generator).squeeze(-1)


def causal_bias(length, past, attention_mask, dtype):
    """The additive (B or 1, 1, L, past + L) mask of causal self-attention on ``length`` new
    tokens after ``past`` cached ones: 0 to attend, the dtype's minimum not; the 1/0
    ``attention_mask`` (B, past + L) also hides padding."""
    minimum = ember.finfo(dtype).min
    causal = ember.ones(length, past + length, dtype=ember.bool).tril(diagonal=past)
    bias = (~causal).to(dtype)[None, None] * minimum
    if attention_mask is not None:
        if attention_mask.dim() != 2 or attention_mask.shape[1] != past + length:
            raise ValueError(f"attention_mask must be (batch, {past + length}), got shape "
                             f"{tuple(attention_mask.shape)}")
        keep = attention_mask.to(dtype)[:, None, None, :]
        bias = (bias + (1.0 - keep) * minimum).clamp(min=minimum)
    return bias
