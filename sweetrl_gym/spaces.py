"""Text spaces for conversational environments."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Space

__all__ = ["Utterance"]

_SAMPLE_ALPHABET = np.array(
    list("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789?.,")
)


class Utterance(Space[str]):
    """Any Python ``str`` of at most ``max_chars`` characters.

    ``gymnasium.spaces.Text`` rejects spaces and unicode by default and enumerates its
    charset, which is wrong for chat messages. This space only checks type and length.

    Args:
        max_chars: Longest string the space contains.
        seed: Optional seed for :meth:`sample`.

    """

    def __init__(self, max_chars: int = 100_000, seed: int | np.random.Generator | None = None):
        if max_chars < 1:
            raise ValueError(f"max_chars must be positive, got {max_chars}")
        self.max_chars = int(max_chars)
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Strings cannot be flattened into numpy arrays."""
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """Return a short random string (for smoke tests such as ``check_env``)."""
        length = int(self.np_random.integers(1, min(self.max_chars, 40) + 1))
        return "".join(self.np_random.choice(_SAMPLE_ALPHABET, size=length))

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is a ``str`` no longer than ``max_chars``."""
        return isinstance(x, str) and len(x) <= self.max_chars

    def __repr__(self) -> str:
        return f"Utterance(max_chars={self.max_chars})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Utterance) and other.max_chars == self.max_chars

    def to_jsonable(self, sample_n: list[str]) -> list[str]:
        """Strings are already JSON values."""
        return list(sample_n)

    def from_jsonable(self, sample_n: list[str]) -> list[str]:
        """Strings are already JSON values."""
        return list(sample_n)
