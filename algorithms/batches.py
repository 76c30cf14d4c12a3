"""Typed training items and the collate steps that tokenize them (every algorithm's).

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

from algorithms.logprobs import TokenizedTurns, branch_mask

__all__ = [
    "ActorBatch",
    "ActorExample",
    "BranchedValueActions",
    "CriticBatch",
    "CriticTrajectory",
    "Dialogue",
    "DialogueBatch",
    "DialoguePair",
    "TurnPairBatch",
    "TurnPairItem",
    "collate_actor_examples",
    "collate_critic_trajectories",
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
    """Turn pairs tokenized: turns ``[0, n)`` are the chosen actions, ``[n, 2n)`` the rejected.

    Attributes:
        turns: A row per pair (the prompt once, the two actions as branches), or a row
            per (prompt, action).
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


@dataclass(frozen=True)
class CriticTrajectory:
    """A trajectory as ArCHer's critic reads it (plain data: stage items hold no tensors).

    Attributes:
        states: Each turn's state, formatted like the policy's prompt (plus the hint).
        actions: Each turn's action.
        rewards: Each turn's reward ``r_t``.
        dones: Whether each turn is terminal (the last always is).
        value_actions: Each turn's actions sampled from the policy for ``V``'s target
            (``value_samples`` per turn); empty: ``V``'s target is read at the buffer's
            action.

    """

    states: tuple[str, ...]
    actions: tuple[str, ...]
    rewards: tuple[float, ...]
    dones: tuple[bool, ...]
    value_actions: tuple[tuple[str, ...], ...] = ()


@dataclass
class BranchedValueActions:
    """A critic batch's rows again, each turn's sampled actions as branches after its state.

    Each sampled action (its tokens and end-of-turn token) sits right after the last token
    of its turn's state, as a branch: it attends to the dialogue's tokens up to there (the
    state) and to its own tokens, at the positions it would have in a row of its own
    (state, then action), and the dialogue's later tokens do not attend to it. So one
    no-gradient forward reads the dialogue's Q and V and Q at every sampled action, each
    as its own row would (up to floating-point rounding), without reading each state
    again for every sample (:func:`algorithms.logprobs.branch_mask`).

    Attributes:
        input_ids: ``(rows, length)`` right-padded.
        branch: ``(rows, length)``: 0 on the dialogues' tokens, ``k >= 1`` on branch ``k``,
            -1 on padding.
        position_ids: ``(rows, length)``.
        state_positions: ``(num_turns, 2)`` ``(row, position)`` of each state's last token.
        action_positions: ``(num_turns, 2)`` of each action's end-of-turn token.
        sampled_positions: ``(num_turns, samples, 2)`` of each sampled action's
            end-of-turn token.

    """

    input_ids: torch.Tensor
    branch: torch.Tensor
    position_ids: torch.Tensor
    state_positions: torch.Tensor
    action_positions: torch.Tensor
    sampled_positions: torch.Tensor

    def read(self, model: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Return ``model``'s heads at ``(state + action, state, state + sampled action)``.

        ``model`` is a :class:`~algorithms.models.ValueHeadModel`; the last tensor is
        ``(num_turns, samples, heads)``.
        """
        device = next(model.parameters()).device
        turns, samples = self.sampled_positions.shape[:2]
        values = model(
            self.input_ids.to(device),
            branch_mask(model.lm, self.branch.to(device)),
            torch.cat(
                [self.action_positions, self.state_positions, self.sampled_positions.flatten(0, 1)]
            ),
            position_ids=self.position_ids.to(device),
        )
        q, v, sampled = values.split([turns, turns, turns * samples])
        return q, v, sampled.unflatten(0, (turns, samples))


@dataclass
class CriticBatch:
    """Critic trajectories tokenized, with where each turn's values are read.

    Attributes:
        tokens: The sequences (one per trajectory, or one per turn where a chat template
            rewrites history); ``tokens.turn_index`` numbers the turns.
        state_positions: ``(num_turns, 2)`` ``(row, position)`` of each state's last token.
        action_positions: ``(num_turns, 2)`` of each action's end-of-turn token.
        next_turn: ``(num_turns,)`` index of the next turn, ``-1`` where done.
        rewards: ``(num_turns,)`` rewards.
        dones: ``(num_turns,)`` 1.0 where done.
        value_actions: Sampled actions as plain rows, for critics whose attention takes
            no branch mask: one encoding per sample ``k``, row ``i`` is turn ``i``'s state
            followed by its ``k``-th sampled action (empty without samples or branched).
        branched: Sampled actions as branches of ``tokens``' rows (``None`` without
            samples or as plain rows).

    """

    tokens: TokenizedTurns
    state_positions: torch.Tensor
    action_positions: torch.Tensor
    next_turn: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    value_actions: tuple[TokenizedTurns, ...] = ()
    branched: BranchedValueActions | None = None

    @property
    def size(self) -> int:
        """Return the number of turns."""
        return int(self.rewards.shape[0])

    def read(self, model: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``model``'s heads at each turn's ``(state + action, state)`` positions."""
        device = next(model.parameters()).device
        tokens = self.tokens.to(device)
        values = model(
            tokens.input_ids,
            tokens.attention_mask,
            torch.cat([self.action_positions, self.state_positions]),
        )
        return values[: self.size], values[self.size :]

    def read_with_value_actions(
        self, model: torch.nn.Module
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Return :meth:`read`'s heads and the heads at each state + sampled action.

        The last tensor is ``(num_turns, samples, heads)``, ``None`` without samples.
        Branched: one forward. Plain rows: one forward for the dialogues, then one per
        sample over the batch's turns (every process makes the same number of calls, so
        a sharded model's collectives line up, and one call's memory is that of one row
        per turn, whatever the number of samples).
        """
        if self.branched is not None:
            return self.branched.read(model)
        q, v = self.read(model)
        if not self.value_actions:
            return q, v, None
        device = next(model.parameters()).device
        sampled = []
        for tokens in self.value_actions:
            tokens = tokens.to(device)
            sampled.append(model(tokens.input_ids, tokens.attention_mask))
        return q, v, torch.stack(sampled, dim=1)


@dataclass(frozen=True)
class ActorExample:
    """One trajectory for ArCHer's actor update (one sequence).

    Attributes:
        prompts: Each turn's prompt in the policy's chat template.
        actions: Each turn's action.
        advantages: The critic's ``min(Q1, Q2) - V`` for each turn.
        weights: What multiplies each turn's log-prob (the advantage, standardised if
            configured).

    """

    prompts: tuple[str, ...]
    actions: tuple[str, ...]
    advantages: tuple[float, ...]
    weights: tuple[float, ...]


@dataclass
class ActorBatch:
    """Actor trajectories tokenized, with one weight and advantage per turn."""

    turns: TokenizedTurns
    weights: torch.Tensor
    advantages: torch.Tensor


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
    encode_pairs: Callable[[Sequence[str], Sequence[str], Sequence[str]], TokenizedTurns],
) -> Callable[[Sequence[TurnPairItem]], TurnPairBatch]:
    """Return a collate step for turn pairs, tokenized with ``encode_pairs``.

    ``encode_pairs(prompts, chosen, rejected)`` is e.g. :meth:`algorithms.Algorithm.encode_pairs`.
    """

    def collate(pairs: Sequence[TurnPairItem]) -> TurnPairBatch:
        return TurnPairBatch(
            turns=encode_pairs(
                [p.prompt for p in pairs], [p.chosen for p in pairs], [p.rejected for p in pairs]
            ),
            reference_chosen=torch.tensor([p.reference_chosen for p in pairs]),
            reference_rejected=torch.tensor([p.reference_rejected for p in pairs]),
        )

    return collate


def collate_critic_trajectories(
    encode_dialogues: Callable[[Sequence[tuple[Sequence[str], Sequence[str]]]], TokenizedTurns],
    encode: Callable[[Sequence[str], Sequence[str]], TokenizedTurns],
    *,
    branch_value_actions: bool = False,
) -> Callable[[Sequence[CriticTrajectory]], CriticBatch]:
    """Return a collate step for ArCHer's critic, tokenized with the critic's tokenizer.

    Args:
        encode_dialogues: Tokenizes whole dialogues, one row each.
        encode: Tokenizes (state, sampled action) rows.
        branch_value_actions: Put sampled actions in the dialogues' rows as branches
            (:class:`BranchedValueActions`; the critic's attention must take a branch
            mask, :func:`algorithms.logprobs.branch_rows_supported`) instead of plain rows.

    """

    def collate(batch: Sequence[CriticTrajectory]) -> CriticBatch:
        tokens = encode_dialogues([(item.states, item.actions) for item in batch])
        counted = (tokens.turn_index >= 0).nonzero()  # (row, position), positions ascending
        turn = tokens.turn_index[counted[:, 0], counted[:, 1]]
        first = torch.full((tokens.num_turns,), tokens.input_ids.shape[1], dtype=torch.long)
        first = first.scatter_reduce(0, turn, counted[:, 1], reduce="amin")
        last = torch.zeros(tokens.num_turns, dtype=torch.long)
        last = last.scatter_reduce(0, turn, counted[:, 1], reduce="amax")
        row = torch.zeros(tokens.num_turns, dtype=torch.long).scatter(0, turn, counted[:, 0])
        state_positions = torch.stack([row, first - 1], 1)
        action_positions = torch.stack([row, last], 1)
        value_actions = _encode_value_actions(batch, encode)
        branched = None
        if value_actions and branch_value_actions:
            branched = _branch_value_actions(
                tokens, state_positions, action_positions, value_actions
            )
            value_actions = ()
        dones = [done for item in batch for done in item.dones]
        return CriticBatch(
            tokens=tokens,
            state_positions=state_positions,
            action_positions=action_positions,
            next_turn=torch.tensor(
                [-1 if done else k + 1 for k, done in enumerate(dones)], dtype=torch.long
            ),
            rewards=torch.tensor([r for item in batch for r in item.rewards], dtype=torch.float32),
            dones=torch.tensor(dones, dtype=torch.float32),
            value_actions=value_actions,
            branched=branched,
        )

    return collate


def _encode_value_actions(
    batch: Sequence[CriticTrajectory], encode: Callable[[Sequence[str], Sequence[str]], Any]
) -> tuple[TokenizedTurns, ...]:
    """One encoding per sample ``k``: each turn's state followed by its ``k``-th action."""
    states = [state for item in batch for state in item.states]
    sampled = [actions for item in batch for actions in item.value_actions]
    if not sampled:
        return ()
    samples = len(sampled[0])
    if len(sampled) != len(states) or any(len(a) != samples for a in sampled):
        raise ValueError(
            f"every turn needs the same number of sampled actions; got "
            f"{sorted({len(a) for a in sampled})} for {len(states)} turns"
        )
    return tuple(encode(states, [a[k] for a in sampled]) for k in range(samples))


def _branch_value_actions(
    tokens: TokenizedTurns,
    state_positions: torch.Tensor,
    action_positions: torch.Tensor,
    value_actions: Sequence[TokenizedTurns],
) -> BranchedValueActions:
    """Insert each turn's sampled actions into its dialogue's row after the turn's state.

    A sampled action's tokens are the counted tokens (action and end token) of its plain
    row, so a branch reads what that row's action part reads.
    """
    num_turns, samples = len(state_positions), len(value_actions)
    inserts: list[list[tuple[int, int, list[int]]]] = [[] for _ in range(len(tokens))]
    for encoded in value_actions:  # sample order: a turn's samples keep it
        for turn in range(num_turns):
            ids = encoded.input_ids[turn][encoded.action_mask[turn].bool()].tolist()
            row, state_end = state_positions[turn].tolist()
            inserts[row].append((state_end, turn, ids))
    lengths = tokens.attention_mask.sum(dim=1).tolist()
    new_column: list[list[int]] = []  # per row: each original column's new column
    rows: list[tuple[list[int], list[int], list[int]]] = []
    sampled_positions = torch.zeros((num_turns, samples, 2), dtype=torch.long)
    filled = [0] * num_turns  # samples placed per turn (inserted in sample order)
    branch_number = 0
    for row, length in enumerate(lengths):
        original = tokens.input_ids[row, :length].tolist()
        ids: list[int] = []
        branch: list[int] = []
        positions: list[int] = []
        columns: list[int] = []
        copied = 0
        # A stable sort: one turn's samples stay in sample order at its insertion point.
        for state_end, turn, action in sorted(inserts[row], key=lambda item: item[0]):
            columns += range(len(ids), len(ids) + state_end + 1 - copied)
            ids += original[copied : state_end + 1]
            branch += [0] * (state_end + 1 - copied)
            positions += range(copied, state_end + 1)
            copied = state_end + 1
            branch_number += 1
            ids += action
            branch += [branch_number] * len(action)
            positions += range(state_end + 1, state_end + 1 + len(action))
            sampled_positions[turn, filled[turn]] = torch.tensor([row, len(ids) - 1])
            filled[turn] += 1
        columns += range(len(ids), len(ids) + length - copied)
        ids += original[copied:]
        branch += [0] * (length - copied)
        positions += range(copied, length)
        new_column.append(columns)
        rows.append((ids, branch, positions))
    width = max(len(ids) for ids, _, _ in rows)
    input_ids = torch.zeros((len(rows), width), dtype=torch.long)
    branch_ids = torch.full((len(rows), width), -1, dtype=torch.long)
    position_ids = torch.zeros((len(rows), width), dtype=torch.long)
    for row, (ids, branch, positions) in enumerate(rows):
        input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        branch_ids[row, : len(ids)] = torch.tensor(branch, dtype=torch.long)
        position_ids[row, : len(ids)] = torch.tensor(positions, dtype=torch.long)

    def moved(where: torch.Tensor) -> torch.Tensor:
        return torch.tensor([[r, new_column[r][c]] for r, c in where.tolist()], dtype=torch.long)

    return BranchedValueActions(
        input_ids=input_ids,
        branch=branch_ids,
        position_ids=position_ids,
        state_positions=moved(state_positions),
        action_positions=moved(action_positions),
        sampled_positions=sampled_positions,
    )


def collate_actor_examples(
    encode_dialogues: Callable[[Sequence[tuple[Sequence[str], Sequence[str]]]], TokenizedTurns],
) -> Callable[[Sequence[ActorExample]], ActorBatch]:
    """Return a collate step for ArCHer's actor: one row per trajectory, weights per turn."""

    def collate(batch: Sequence[ActorExample]) -> ActorBatch:
        return ActorBatch(
            turns=encode_dialogues([(e.prompts, e.actions) for e in batch]),
            weights=torch.tensor([w for e in batch for w in e.weights], dtype=torch.float32),
            advantages=torch.tensor([a for e in batch for a in e.advantages], dtype=torch.float32),
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
