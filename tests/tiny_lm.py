"""The tiny random-init LM the tests build (it lives in :mod:`agents.tiny_model`)."""

from agents.tiny_model import (
    CHATML_TEMPLATE,
    SPECIAL_TOKENS,
    TINY_VOCAB_SIZE,
    make_tiny_lm,
    make_tiny_tokenizer,
)

__all__ = [
    "CHATML_TEMPLATE",
    "SPECIAL_TOKENS",
    "TINY_VOCAB_SIZE",
    "make_tiny_lm",
    "make_tiny_tokenizer",
]
