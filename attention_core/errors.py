"""The one error the core raises for input it cannot use."""


class AttentionInputError(ValueError):
    """A setting, shape or text the core cannot use. The message says what is wrong and how to fix it, in words
    a page can show as they are; pages catch this error (and only this one) to show such a message."""
