"""torchtext's ``is_jitable`` property, for the classes that have it."""


class NotJitable:
    """Mixin: ``is_jitable`` is False. torchtext's vocab and tokenizers say whether they are
    TorchScript objects (after ``__prepare_scriptable__``); embertext's are plain Python."""

    @property
    def is_jitable(self):
        return False
