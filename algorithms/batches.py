"""Typed training items and the collate steps that tokenize them.

Items are plain data (strings and floats), so they can be cached as JSON in the run
directory and resumed; a stage's ``collate`` turns a list of items into one tokenized
batch, and a loss is ``loss(model, batch)`` with no tokenization inside. A dialogue is
one sequence with per-turn action masks (:func:`algorithms.logprobs.encode_dialogues`).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import torch

from algorithms.logprobs import TokenizedTurns

__all__ = [
    "Dialogue",
    "DialogueBatch",
    "DialoguePair",
    "TurnPairBatch",
    "TurnPairItem",
    "collate_dialogue_pairs",
    "collate_dialogues",
    "collate_turn_pairs",
    "from_json",
    "length_grouped_order",
    "split_by_lengths",
    "to_json",
]

_Item = TypeVar("_Item")
_Value = TypeVar("_Value")


@dataclass(frozen=True)
class Dialogue:
    """One trajectory as a scored model reads it.

    Attributes:
        prompts: Each turn's formatted prompt (chat template applied).
        actions: Each turn's action.
        reference: Each turn's value under the frozen reference (a log-prob sum or
            mean, per the algorithm); empty when the algorithm needs none.

    """

    prompts: tuple[str, ...]
    actions: tuple[str, ...]
    reference: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "prompts", tuple(self.prompts))
        object.__setattr__(self, "actions", tuple(self.actions))
        object.__setattr__(self, "reference", tuple(float(v) for v in self.reference))
        if len(self.prompts) != len(self.actions) or not self.prompts:
            raise ValueError(
                f"a dialogue needs one prompt per action and at least one turn, got "
                f"{len(self.prompts)} prompts and {len(self.actions)} actions"
            )
        if self.reference and len(self.reference) != len(self.actions):
            raise ValueError(
                f"{len(self.reference)} reference values for {len(self.actions)} turns"
            )

    def text_length(self) -> int:
        """Characters of its row: the last prompt holds the earlier turns."""
        return len(self.prompts[-1]) + len(self.actions[-1])


@dataclass(frozen=True)
class DialoguePair:
    """A better and a worse trajectory of one task (SWEET-RL's critic, Multi-turn DPO)."""

    chosen: Dialogue
    rejected: Dialogue

    def text_length(self) -> int:
        """Characters of its longer row (a batch pads to it)."""
        return max(self.chosen.text_length(), self.rejected.text_length())


@dataclass(frozen=True)
class TurnPairItem:
    """Two actions for one turn with the frozen policy's summed log-probs (SWEET-RL's policy).

    Attributes:
        prompt: The turn's formatted prompt.
        chosen: The preferred action.
        rejected: The other action.
        reference_chosen: Summed log-prob of ``chosen`` under the frozen policy.
        reference_rejected: Summed log-prob of ``rejected`` under the frozen policy.

    """

    prompt: str
    chosen: str
    rejected: str
    reference_chosen: float
    reference_rejected: float

    def text_length(self) -> int:
        """Characters of its longer row (a batch pads to it)."""
        return len(self.prompt) + max(len(self.chosen), len(self.rejected))


@dataclass
class DialogueBatch:
    """Dialogues tokenized one row each, with per-turn bookkeeping.

    Attributes:
        turns: The tokens (``turns.turn_index`` numbers the turns across dialogues).
        dialogue_index: ``(num_turns,)`` which dialogue each turn belongs to.
        reference: ``(num_turns,)`` the frozen reference values (zeros if none).
        num_dialogues: How many dialogues (pairs lay them out chosen, rejected, ...).

    """

    turns: TokenizedTurns
    dialogue_index: torch.Tensor
    reference: torch.Tensor
    num_dialogues: int


@dataclass
class TurnPairBatch:
    """Turn pairs tokenized: rows ``[0, n)`` are the chosen actions, ``[n, 2n)`` the rejected.

    Attributes:
        turns: One row per (prompt, action).
        reference_chosen: ``(n,)`` frozen summed log-probs of the chosen actions.
        reference_rejected: ``(n,)`` the same for the rejected actions.

    """

    turns: TokenizedTurns
    reference_chosen: torch.Tensor
    reference_rejected: torch.Tensor

    @property
    def num_pairs(self) -> int:
        """Return the number of pairs."""
        return int(self.reference_chosen.shape[0])


def collate_dialogues(
    encode: Callable[[Sequence[tuple[Sequence[str], Sequence[str]]]], TokenizedTurns],
) -> Callable[[Sequence[Dialogue]], DialogueBatch]:
    """Return a collate step for dialogues, tokenized with ``encode`` (one row each)."""

    def collate(dialogues: Sequence[Dialogue]) -> DialogueBatch:
        turns = encode([(d.prompts, d.actions) for d in dialogues])
        index = [i for i, d in enumerate(dialogues) for _ in d.actions]
        reference = [
            value
            for d in dialogues
            for value in (d.reference if d.reference else (0.0,) * len(d.actions))
        ]
        return DialogueBatch(
            turns=turns,
            dialogue_index=torch.tensor(index, dtype=torch.long),
            reference=torch.tensor(reference, dtype=torch.float32),
            num_dialogues=len(dialogues),
        )

    return collate


def collate_dialogue_pairs(
    encode: Callable[[Sequence[tuple[Sequence[str], Sequence[str]]]], TokenizedTurns],
) -> Callable[[Sequence[DialoguePair]], DialogueBatch]:
    """Return a collate step for dialogue pairs: dialogues ``2i`` (chosen) and ``2i + 1``."""
    collate = collate_dialogues(encode)
    return lambda pairs: collate([d for p in pairs for d in (p.chosen, p.rejected)])


def collate_turn_pairs(
    encode: Callable[[Sequence[str], Sequence[str]], TokenizedTurns],
) -> Callable[[Sequence[TurnPairItem]], TurnPairBatch]:
    """Return a collate step for turn pairs, tokenized with ``encode(prompts, actions)``."""

    def collate(pairs: Sequence[TurnPairItem]) -> TurnPairBatch:
        prompts = [p.prompt for p in pairs]
        actions = [p.chosen for p in pairs] + [p.rejected for p in pairs]
        return TurnPairBatch(
            turns=encode(prompts * 2, actions),
            reference_chosen=torch.tensor([p.reference_chosen for p in pairs]),
            reference_rejected=torch.tensor([p.reference_rejected for p in pairs]),
        )

    return collate


def to_json(items: Sequence[Any]) -> list[dict[str, Any]]:
    """Return dataclass items as JSON-ready dicts (for the run directory's cache)."""
    return [dataclasses.asdict(item) for item in items]


def from_json(kind: type[_Item], data: Sequence[dict[str, Any]]) -> list[_Item]:
    """Rebuild items of dataclass ``kind`` (nested dataclasses too) from :func:`to_json`."""
    hints = typing.get_type_hints(kind)
    nested = {name: hint for name, hint in hints.items() if dataclasses.is_dataclass(hint)}
    return [
        kind(
            **{key: nested[key](**value) if key in nested else value for key, value in row.items()}
        )
        for row in data
    ]


def split_by_lengths(values: Sequence[_Value], lengths: Sequence[int]) -> list[list[_Value]]:
    """Cut a flat list (e.g. every turn's value) into consecutive runs of ``lengths``.

    Raises:
        ValueError: If the lengths do not add up to the number of values.

    """
    if sum(lengths) != len(values):
        raise ValueError(f"{len(values)} values but lengths that add up to {sum(lengths)}")
    out, start = [], 0
    for length in lengths:
        out.append(list(values[start : start + length]))
        start += length
    return out


def length_grouped_order(
    order: Sequence[int],
    lengths: Sequence[int],
    batch_size: int,
    *,
    group_batches: int = 32,
    rng: np.random.Generator,
) -> list[int]:
    """Reorder a shuffled index list so that each batch holds items of similar length.

    The shuffled order is cut into groups of ``group_batches`` batches; within a group the
    items are sorted by length and cut into batches, whose order is then shuffled. A
    batch pads to its longest item, so similar lengths waste less compute on padding,
    while the groups keep the data order random at a larger scale.

    Args:
        order: A permutation of the item indices (the epoch's shuffled order).
        lengths: Each item's length (any unit that grows with its tokens).
        batch_size: Items per batch (the global batch: per process x processes, so that
            the processes of one step get items of similar length).
        group_batches: Batches per sorted group.
        rng: Shuffles the batches within a group.

    Returns:
        The same indices, reordered.

    """
    if batch_size < 1 or group_batches < 1:
        raise ValueError("batch_size and group_batches must be positive")
    size = batch_size * group_batches
    grouped: list[int] = []
    for start in range(0, len(order), size):
        chunk = sorted(order[start : start + size], key=lambda i: -lengths[i])
        batches = [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
        # A short last batch stays last, so that only the epoch's final batch is short.
        full = [b for b in batches if len(b) == batch_size]
        short = [b for b in batches if len(b) < batch_size]
        for index in rng.permutation(len(full)):
            grouped += full[index]
        for batch in short:
            grouped += batch
    return grouped
