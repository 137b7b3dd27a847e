"""GPT-2 (Radford et al., 2019) with the module names of Hugging Face `transformers`, a key /
value cache, and generation by greedy search, top-k and top-p sampling."""

import math
import os
from dataclasses import dataclass, field

import ember
from ember import nn
from ember.nn import functional as F
from embertext.models._config import HFConfig
from embertext.models._generation import causal_bias, decode
from embertext.models.bert import BertOutput, _activation, _read_weights

__all__ = ["GPT2Config", "GPT2Model", "GPT2LMHeadModel"]


@dataclass
class GPT2Config(HFConfig):
    """The hyper-parameters of GPT-2 (the keys of its ``config.json``; gpt2's by default)."""

    model_type = "gpt2"

    vocab_size: int = 50257
    n_positions: int = 1024
    n_embd: int = 768
    n_layer: int = 12
    n_head: int = 12
    n_inner: int = None
    activation_function: str = "gelu_new"
    resid_pdrop: float = 0.1
    embd_pdrop: float = 0.1
    attn_pdrop: float = 0.1
    layer_norm_epsilon: float = 1e-5
    scale_attn_weights: bool = True
    bos_token_id: int = 50256
    eos_token_id: int = 50256
    extra: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, data):
        config = cls._from_keys(data)
        for unsupported in ("scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"):
            if data.get(unsupported):
                raise ValueError(f"{unsupported}=True is not supported")
        if config.n_embd % config.n_head:
            raise ValueError(f"n_embd ({config.n_embd}) is not a multiple of n_head "
                             f"({config.n_head})")
        return config


class Conv1D(nn.Module):
    """GPT-2's linear layer: ``x @ weight + bias`` with ``weight`` of shape (in, out)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(ember.empty(nx, nf))
        self.bias = nn.Parameter(ember.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        return ember.matmul(x, self.weight) + self.bias


class GPT2Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.n_head = config.n_head
        self.head_dim = config.n_embd // config.n_head
        self.scale = config.scale_attn_weights
        self.c_attn = Conv1D(3 * config.n_embd, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, config.n_embd)
        self.attn_dropout = nn.Dropout(config.attn_pdrop)
        self.resid_dropout = nn.Dropout(config.resid_pdrop)

    def _heads(self, x):
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_head, self.head_dim).transpose(1, 2)

    def forward(self, x, bias, past=None):
        q, k, v = self.c_attn(x).split(x.shape[-1], dim=-1)
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        if past is not None:
            k = ember.cat([past[0], k], dim=2)
            v = ember.cat([past[1], v], dim=2)
        scores = ember.matmul(q, k.transpose(-1, -2))
        if self.scale:
            scores = scores / math.sqrt(self.head_dim)
        scores = scores + bias
        probs = self.attn_dropout(F.softmax(scores, dim=-1))
        out = ember.matmul(probs, v).transpose(1, 2)
        out = out.reshape(out.shape[0], out.shape[1], -1)
        return self.resid_dropout(self.c_proj(out)), (k, v)


class GPT2MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        inner = config.n_inner or 4 * config.n_embd
        self.c_fc = Conv1D(inner, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, inner)
        self.act = _activation(config.activation_function)
        self.dropout = nn.Dropout(config.resid_pdrop)

    def forward(self, x):
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class GPT2Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.attn = GPT2Attention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.mlp = GPT2MLP(config)

    def forward(self, x, bias, past=None):
        attended, present = self.attn(self.ln_1(x), bias, past)
        x = x + attended
        return x + self.mlp(self.ln_2(x)), present


class GPT2Model(nn.Module):
    r"""The GPT-2 decoder stack: token and position embeddings, ``n_layer`` pre-norm blocks
    with causal self-attention, a final layer norm.

    Forward takes ``past_key_values`` (the ``present`` of an earlier call) to go on from a
    cached prefix; ``attention_mask`` (B, past + L) hides padding.

    Shape:
        - input_ids: :math:`(B, L)`; last_hidden_state: :math:`(B, L, H)`.
    """

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.n_positions, config.n_embd)
        self.drop = nn.Dropout(config.embd_pdrop)
        self.h = nn.ModuleList([GPT2Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)

    def forward(self, input_ids, attention_mask=None, position_ids=None, past_key_values=None):
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids must be (batch, length), got shape "
                             f"{tuple(input_ids.shape)}")
        batch, length = input_ids.shape
        past = 0 if past_key_values is None else past_key_values[0][0].shape[2]
        if past + length > self.config.n_positions:
            raise ValueError(f"{past + length} positions, more than n_positions "
                             f"({self.config.n_positions})")
        if position_ids is None:
            if attention_mask is not None:
                # Left padding: positions count the tokens that are there.
                keep = attention_mask.to(ember.long)
                position_ids = (ember.cumsum(keep, dim=1) - 1).clamp(min=0)[:, past:]
            else:
                position_ids = ember.arange(past, past + length).unsqueeze(0)
        x = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        bias = causal_bias(length, past, attention_mask, x.dtype)
        presents = []
        for i, block in enumerate(self.h):
            x, present = block(x, bias, None if past_key_values is None else past_key_values[i])
            presents.append(present)
        return BertOutput(last_hidden_state=self.ln_f(x), past_key_values=tuple(presents))


class GPT2LMHeadModel(nn.Module):
    r"""GPT-2 with its language-model head (tied to the token embeddings) and
    :meth:`generate`.

    Examples::

        >>> model = GPT2LMHeadModel.from_pretrained("gpt2/")
        >>> model.generate(ember.tensor([[464, 2068]]), max_new_tokens=5)
    """

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight

    @classmethod
    def from_pretrained(cls, path, strict=True):
        """A model from a folder with ``config.json`` and ``model.safetensors`` (or
        ``pytorch_model.bin``)."""
        model = cls(GPT2Config.from_json_file(os.path.join(path, "config.json")))
        state = {k: v for k, v in _read_weights(path).items()
                 if not k.endswith((".attn.bias", ".attn.masked_bias"))}
        if not any(k.startswith("transformer.") for k in state):
            state = {("lm_head.weight" if k == "lm_head.weight" else "transformer." + k): v
                     for k, v in state.items()}
        state.setdefault("lm_head.weight", state["transformer.wte.weight"])
        model.load_state_dict(state, strict=strict)
        return model.eval()

    def forward(self, input_ids, attention_mask=None, position_ids=None, past_key_values=None,
                labels=None):
        out = self.transformer(input_ids, attention_mask, position_ids, past_key_values)
        logits = self.lm_head(out.last_hidden_state)
        loss = None
        if labels is not None:
            shifted = logits[:, :-1].reshape(-1, logits.shape[-1])
            loss = F.cross_entropy(shifted, labels[:, 1:].reshape(-1), ignore_index=-100)
        return BertOutput(loss=loss, logits=logits, past_key_values=out.past_key_values)

    @ember.no_grad()
    def generate(self, input_ids, max_new_tokens=20, do_sample=False, temperature=1.0,
                 top_k=None, top_p=None, eos_token_id=None, generator=None):
        r"""Continue ``input_ids`` (B, L) by up to ``max_new_tokens`` tokens, one step at a
        time on the key / value cache.

        Args:
            do_sample (bool): sample from the (filtered) distribution; greedy otherwise.
            temperature (float): divides the logits before sampling.
            top_k (int, optional): sample among the ``top_k`` most likely tokens.
            top_p (float, optional): sample among the most likely tokens whose
                probabilities add up to ``top_p`` (nucleus sampling).
            eos_token_id (int, optional): a sequence that produced it stops (is padded with
                it from then on); all stopped ends generation.
            generator (ember.Generator, optional): the random numbers of sampling.

        Returns:
            Tensor: (B, L + new tokens), the prompt and its continuation.
        """
        def step(ids, past):
            out = self(ids, past_key_values=past)
            return out.logits[:, -1], out.past_key_values

        return decode(step, input_ids, input_ids, max_new_tokens, do_sample, temperature, top_k,
                      top_p, eos_token_id, None, generator)
