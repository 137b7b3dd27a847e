"""Post-processors: special tokens around one sequence or a pair, type ids and offset
trimming (the ``tokenizers.processors`` of Hugging Face)."""

from embertext.tokenizers import _unicode

__all__ = ["PostProcessor", "BertProcessing", "RobertaProcessing", "ByteLevel",
           "TemplateProcessing", "Sequence"]

# The byte-level space and real whitespace (in added tokens that took it with lstrip).
_TRIMMED = _unicode.bytes_to_unicode()[ord(" ")] + "".join(sorted(_unicode.WHITESPACE))


class PostProcessor:
    """The base of post-processors: :meth:`process` joins the encodings of a sequence (and
    its pair) into one, adding special tokens."""

    def num_special_tokens_to_add(self, is_pair):
        return 0

    def process(self, encoding, pair=None, add_special_tokens=True):
        from embertext.tokenizers._encoding import Encoding

        return Encoding.merge([encoding] if pair is None else [encoding, pair])

    def to_dict(self):
        return {"type": type(self).__name__}


def _special(token, index, type_id=0):
    from embertext.tokenizers._encoding import Encoding

    return Encoding([index], [token], [(0, 0)], type_ids=[type_id], special_tokens_mask=[1],
                    word_ids=[None], sequence_ids=[None])


def _wrap(encoding, first, last):
    """``first + encoding + last`` for one sequence, ``first`` and ``last`` ``(token, id)``
    special tokens of type id 0 (the common case, without the merge of Encoding objects)."""
    from embertext.tokenizers._encoding import Encoding

    return Encoding([first[1], *encoding.ids, last[1]], [first[0], *encoding.tokens, last[0]],
                    [(0, 0), *encoding.offsets, (0, 0)], [0, *encoding.type_ids, 0],
                    [1, *encoding.attention_mask, 1], [1, *encoding.special_tokens_mask, 1],
                    [None, *encoding.word_ids, None], [None, *encoding.sequence_ids, None]
                    )


def trim_byte_level_offsets(encoding, add_prefix_space):
    """Leave the byte-level spaces at the ends of tokens out of their offsets (once: the
    compiled byte-level pipeline may have done it already)."""
    if encoding._trimmed:
        return
    encoding._trimmed = True
    offsets = encoding.offsets
    trimmed = _TRIMMED
    for i, token in enumerate(encoding.tokens):
        if not token or (token[0] not in trimmed and token[-1] not in trimmed):
            continue
        leading = len(token) - len(token.lstrip(_TRIMMED))
        trailing = len(token) - len(token.rstrip(_TRIMMED))
        if not (leading or trailing):
            continue
        start, end = offsets[i]
        if leading:
            if (i == 0 or start == 0) and add_prefix_space and leading == 1:
                leading = 0
            start = min(start + leading, end)
        if trailing and end >= trailing:
            end = max(end - trailing, start)
        offsets[i] = (start, end)


class BertProcessing(PostProcessor):
    """``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]``, the pair's type id 1.

    Args:
        sep (tuple): ``(token, id)`` of the separator.
        cls (tuple): ``(token, id)`` of the classification token.
    """

    def __init__(self, sep, cls):
        self.sep = tuple(sep)
        self.cls = tuple(cls)

    def num_special_tokens_to_add(self, is_pair):
        return 3 if is_pair else 2

    def process(self, encoding, pair=None, add_special_tokens=True):
        from embertext.tokenizers._encoding import Encoding

        if not add_special_tokens:
            return super().process(encoding, pair)
        if pair is None:
            return _wrap(encoding, self.cls, self.sep)
        parts = [_special(*self.cls), encoding, _special(*self.sep)]
        if pair is not None:
            pair.type_ids = [1] * len(pair)
            parts += [pair, _special(*self.sep, type_id=1)]
        return Encoding.merge(parts)

    def to_dict(self):
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}


class RobertaProcessing(PostProcessor):
    """``<s> A </s>`` and ``<s> A </s></s> B </s>``, all type ids 0; with ``trim_offsets``
    the byte-level spaces are left out of the offsets."""

    def __init__(self, sep, cls, trim_offsets=True, add_prefix_space=True):
        self.sep = tuple(sep)
        self.cls = tuple(cls)
        self.trim_offsets = trim_offsets
        self.add_prefix_space = add_prefix_space

    def num_special_tokens_to_add(self, is_pair):
        return 4 if is_pair else 2

    def process(self, encoding, pair=None, add_special_tokens=True):
        from embertext.tokenizers._encoding import Encoding

        for part in (encoding, pair):
            if part is not None and self.trim_offsets:
                trim_byte_level_offsets(part, self.add_prefix_space)
        if pair is not None:  # RoBERTa has no token types: the pair's are 0 too
            pair.type_ids = [0] * len(pair)
        if not add_special_tokens:
            return super().process(encoding, pair)
        if pair is None:
            return _wrap(encoding, self.cls, self.sep)
        parts = [_special(*self.cls), encoding, _special(*self.sep)]
        if pair is not None:
            parts += [_special(*self.sep), pair, _special(*self.sep)]
        return Encoding.merge(parts)

    def to_dict(self):
        return {"type": "RobertaProcessing", "sep": list(self.sep), "cls": list(self.cls),
                "trim_offsets": self.trim_offsets, "add_prefix_space": self.add_prefix_space}


class ByteLevel(PostProcessor):
    """Leave the byte-level spaces at the ends of tokens out of their offsets."""

    def __init__(self, add_prefix_space=True, trim_offsets=True, use_regex=True):
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    def process(self, encoding, pair=None, add_special_tokens=True):
        for part in (encoding, pair):
            if part is not None and self.trim_offsets:
                trim_byte_level_offsets(part, self.add_prefix_space)
        return super().process(encoding, pair)

    def to_dict(self):
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}


def _parse_template(template):
    if isinstance(template, str):
        template = template.split()
    items = []
    for item in template:
        if isinstance(item, dict):
            if "Sequence" in item:
                items.append(("sequence", item["Sequence"]["id"], item["Sequence"]["type_id"]))
            else:
                items.append(("special", item["SpecialToken"]["id"],
                              item["SpecialToken"]["type_id"]))
            continue
        name, _, type_id = item.partition(":")
        type_id = int(type_id) if type_id else 0
        if name in ("$A", "$B", "$"):
            items.append(("sequence", "B" if name == "$B" else "A", type_id))
        elif name.startswith("$") and name[1:].isdigit():
            items.append(("sequence", "A", int(name[1:])))
        else:
            items.append(("special", name, type_id))
    return items


class TemplateProcessing(PostProcessor):
    r"""Special tokens placed by templates such as ``"[CLS] $A [SEP]"`` and
    ``"[CLS] $A [SEP] $B:1 [SEP]:1"`` (``:N`` sets the type id).

    Args:
        single: the template of one sequence.
        pair: the template of a pair.
        special_tokens: ``(token, id)`` pairs of the special tokens used.

    Examples::

        >>> TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        ...                    special_tokens=[("[CLS]", 1), ("[SEP]", 0)])
    """

    def __init__(self, single=None, pair=None, special_tokens=None):
        self.single = _parse_template(single or "$A")
        self.pair = _parse_template(pair or "$A $B:1")
        self.special_tokens = {}
        if isinstance(special_tokens, dict):
            for name, entry in special_tokens.items():
                self.special_tokens[name] = (list(entry["ids"]), list(entry["tokens"]))
        else:
            for entry in special_tokens or []:
                token, index = entry
                self.special_tokens[token] = ([index], [token])
        for kind, name, _ in self.single + self.pair:
            if kind == "special" and name not in self.special_tokens:
                raise ValueError(f"missing special token {name!r} in the template's tokens")

    def num_special_tokens_to_add(self, is_pair):
        template = self.pair if is_pair else self.single
        return sum(len(self.special_tokens[name][0]) for kind, name, _ in template
                   if kind == "special")

    def process(self, encoding, pair=None, add_special_tokens=True):
        from embertext.tokenizers._encoding import Encoding

        template = self.single if pair is None else self.pair
        parts = []
        for kind, name, type_id in template:
            if kind == "sequence":
                part = encoding if name == "A" else pair
                part.type_ids = [type_id] * len(part)
                parts.append(part)
            elif add_special_tokens:
                ids, tokens = self.special_tokens[name]
                parts.append(Encoding(list(ids), list(tokens), [(0, 0)] * len(ids),
                                      type_ids=[type_id] * len(ids),
                                      special_tokens_mask=[1] * len(ids),
                                      word_ids=[None] * len(ids),
                                      sequence_ids=[None] * len(ids)))
        return Encoding.merge(parts)

    def to_dict(self):
        def items(template):
            return [{"Sequence": {"id": name, "type_id": type_id}} if kind == "sequence"
                    else {"SpecialToken": {"id": name, "type_id": type_id}}
                    for kind, name, type_id in template]

        return {"type": "TemplateProcessing", "single": items(self.single),
                "pair": items(self.pair),
                "special_tokens": {name: {"id": name, "ids": ids, "tokens": tokens}
                                   for name, (ids, tokens) in self.special_tokens.items()}}


class Sequence(PostProcessor):
    """Post-processors applied one after another."""

    def __init__(self, processors):
        self.processors = list(processors)

    def num_special_tokens_to_add(self, is_pair):
        return sum(p.num_special_tokens_to_add(is_pair) for p in self.processors)

    def process(self, encoding, pair=None, add_special_tokens=True):
        # Each processor but the last works on the parts; the last one joins them.
        for processor in self.processors[:-1]:
            if isinstance(processor, ByteLevel) and processor.trim_offsets:
                for part in (encoding, pair):
                    if part is not None:
                        trim_byte_level_offsets(part, processor.add_prefix_space)
        return self.processors[-1].process(encoding, pair, add_special_tokens)

    def to_dict(self):
        return {"type": "Sequence", "processors": [p.to_dict() for p in self.processors]}


def from_dict(data):
    """The post-processor of a ``tokenizer.json`` entry."""
    if data is None:
        return None
    kind = data["type"]
    if kind == "BertProcessing":
        return BertProcessing(data["sep"], data["cls"])
    if kind == "RobertaProcessing":
        return RobertaProcessing(data["sep"], data["cls"], data.get("trim_offsets", True),
                                 data.get("add_prefix_space", True))
    if kind == "ByteLevel":
        return ByteLevel(data.get("add_prefix_space", True), data.get("trim_offsets", True),
                         data.get("use_regex", True))
    if kind == "TemplateProcessing":
        return TemplateProcessing(data["single"], data["pair"], data["special_tokens"])
    if kind == "Sequence":
        processors = [from_dict(item) for item in data["processors"]]
        if any(not isinstance(p, ByteLevel) for p in processors[:-1]):
            raise ValueError("only ByteLevel may come before the last post-processor of a "
                             "Sequence")
        return Sequence(processors)
    raise ValueError(f"unsupported post-processor type in tokenizer.json: {kind!r}")
