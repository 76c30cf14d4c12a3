"""Log-probabilities of agent actions under a causal LM, per turn, batched with padding.

Every algorithm scores a turn the same way: the turn's prompt (its structured messages
formatted with the scored model's own chat template, e.g.
:meth:`agents.TransformersAgent.format_prompts`) followed by the action and the
end-of-turn token; only the action's tokens (and that end token, so the model learns
to stop) count. Prompt and action are tokenized apart, as they are at generation time.

Too long a row is cut in the middle of its prompt (:func:`truncate_middle`): it keeps the
prompt's head, where the system prompt, the task and (for SWEET-RL's critic) the
reference hint are, and its latest tokens, which the action answers; it drops the oldest
turns after the head. The action is never cut.

Two encodings feed the same scoring functions:

* :func:`encode_turns`: one row per turn (its whole prompt, then its action);
* :func:`encode_dialogues`: one row per dialogue (the last turn's prompt already holds
  every earlier turn and its action), so a ``T``-turn dialogue costs its length once
  instead of ``T`` growing prefixes. Dialogues that cannot be packed exactly fall back
  to one row per turn.

* :func:`encode_turn_pairs`: one row per pair of actions answering one prompt (a
  preference pair), the prompt read once: each action attends to the shared prompt and
  to itself, not to the other (a block attention mask and per-branch positions), so the
  pair costs its prompt once instead of twice. Models whose attention takes no such
  mask are given two plain rows (:func:`branch_rows_supported`).

Either way :class:`TokenizedTurns` records which turn each counted token belongs to, and
:func:`turn_logprobs` returns one value per turn.

Memory: :func:`token_logprobs` never builds the ``(batch, length, vocab)`` logits. It
runs the model's own forward (through any DDP/FSDP/accelerate/peft wrapper) with the
output head temporarily replaced by a function that applies the original head only to
the positions that predict action tokens, ``chunk_size`` positions at a time, keeping
one fp32 log-prob per position; with gradients each chunk is recomputed in backward
(activation checkpointing), so no chunk's logits are kept either.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.checkpoint import checkpoint

from sweetrl_gym.lm import (
    CausalLM,
    Tokenizer,
    cache_arguments,
    output_cache,
    plain_causal_attention,
)

__all__ = [
    "HEAD_CHUNK_SIZE",
    "TokenizedTurns",
    "TurnLogProbs",
    "branch_mask",
    "branch_rows_supported",
    "encode_dialogues",
    "encode_ranked_candidates",
    "encode_response_spans",
    "encode_turn_pairs",
    "encode_turns",
    "response_template",
    "shared_prefix_length",
    "shared_prefix_turn_logprobs",
    "token_logprobs",
    "truncate_middle",
    "turn_logprobs",
]

HEAD_CHUNK_SIZE = 1024
"""Positions per chunk of the output head (a chunk's logits: ``chunk x vocab`` fp32)."""

# Config attributes of models that transform the logits after the head (Gemma 2/3
# soft-capping, Cohere's logit scale, Granite's logits scaling): the chunked head would
# miss the transform, so these models take the full-logits path.
_POST_HEAD_TRANSFORMS = ("final_logit_softcapping", "logit_scale", "logits_scaling")


@dataclass(frozen=True)
class TokenizedTurns:
    """Right-padded token ids: one row per turn, or one row per packed dialogue.

    Attributes:
        input_ids: ``(rows, length)`` prompt, then action, then end-of-turn token (a
            packed dialogue: every turn's new prompt text and action, in order).
        attention_mask: ``(rows, length)`` 1 on real tokens.
        action_mask: ``(rows, length)`` 1 on the tokens whose log-probs count.
        turn_index: ``(rows, length)`` long: the turn each counted token belongs to, as
            an index into the flat list of turns that was encoded; -1 elsewhere.
        num_turns: How many turns were encoded (the length of per-turn results).
        branch: ``(rows, length)`` long, rows of :func:`encode_turn_pairs` only: 0 on
            the tokens every branch of the row reads (the shared prompt), ``k >= 1`` on
            branch ``k``'s own tokens, -1 on padding. A token attends to earlier tokens
            of branch 0 and of its own branch. ``None``: plain causal rows.
        position_ids: ``(rows, length)`` long, with ``branch``: each branch's positions
            continue from the end of the shared prompt, as in a row of its own.

    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    action_mask: torch.Tensor
    turn_index: torch.Tensor
    num_turns: int
    branch: torch.Tensor | None = None
    position_ids: torch.Tensor | None = None

    def __len__(self) -> int:
        """Return the number of rows (for :func:`encode_turns`, the number of turns)."""
        return int(self.input_ids.shape[0])

    def select(self, rows: slice | Sequence[int]) -> TokenizedTurns:
        """Return some rows, trimmed to their longest real sequence.

        Turn indices stay global (``num_turns`` is unchanged), so per-turn results of a
        selection line up with those of the whole; turns in no selected row score 0.
        """
        mask = self.attention_mask[rows]
        width = int(mask.sum(dim=1).max()) if mask.numel() else 0

        def cut(tensor: torch.Tensor | None) -> torch.Tensor | None:
            return None if tensor is None else tensor[rows][:, :width]

        return TokenizedTurns(
            self.input_ids[rows][:, :width],
            mask[:, :width],
            self.action_mask[rows][:, :width],
            self.turn_index[rows][:, :width],
            self.num_turns,
            cut(self.branch),
            cut(self.position_ids),
        )

    def to(self, device: Any) -> TokenizedTurns:
        """Return the tensors on ``device``."""

        def move(tensor: torch.Tensor | None) -> torch.Tensor | None:
            return None if tensor is None else tensor.to(device)

        return TokenizedTurns(
            self.input_ids.to(device),
            self.attention_mask.to(device),
            self.action_mask.to(device),
            self.turn_index.to(device),
            self.num_turns,
            move(self.branch),
            move(self.position_ids),
        )


@dataclass(frozen=True)
class TurnLogProbs:
    """Log-probabilities of each turn's action tokens.

    Attributes:
        sum: ``(num_turns,)`` summed log-probs of the action tokens.
        mean: ``(num_turns,)`` their mean (length-normalised; SWEET-RL's
            parameterisation).
        num_tokens: ``(num_turns,)`` how many tokens counted.

    """

    sum: torch.Tensor
    mean: torch.Tensor
    num_tokens: torch.Tensor


# A shared prefix's key/value states (a transformers cache) and its length in tokens.
_Past = tuple[Any, int]

# -- Encoding ----------------------------------------------------------------------------

# A row to stack: its token ids and the (start, stop, turn) spans of its counted tokens.
_Row = tuple[list[int], list[tuple[int, int, int]]]


def _end_ids(tokenizer: Tokenizer, add_end_token: bool) -> list[int]:
    if not add_end_token:
        return []
    if tokenizer.eos_token_id is None:
        raise ValueError("the tokenizer has no eos token; pass add_end_token=False")
    return [tokenizer.eos_token_id]


def _check_turn(turn: int, prompt: list[int], action: list[int]) -> None:
    if not action:
        raise ValueError(f"turn {turn}: empty action and no end token")
    if not prompt:
        raise ValueError(f"turn {turn}: empty prompt (nothing predicts the first token)")


def truncate_middle(ids: list[int], max_length: int, head: int | None = None) -> list[int]:
    """Cut a too-long token sequence in the middle: keep its first and its last tokens.

    Cutting the start (the usual left truncation) would first remove the system prompt
    and the task, and a critic's reference hint with them; cutting the end would remove
    the latest turn. This keeps ``ids[:head] + ids[-(max_length - head):]``.

    Args:
        ids: The token ids.
        max_length: Most tokens kept (at least 1).
        head: Tokens kept from the start; default ``max_length // 2``. The default is
            used everywhere rows are cut, so a prompt is cut the same way whichever
            encoding or batch it is in (a critic trained on packed dialogues scores
            single turns), and half the default 4096-token budget holds the system
            prompt, task and reference hint with room to spare (bundled backend tasks:
            at most ~1,500 characters together).

    Returns:
        ``ids`` itself if it fits, else a new list of exactly ``max_length`` ids.

    Raises:
        ValueError: If ``max_length`` is below 1 or ``head`` outside ``[0, max_length]``.

    Example:
        >>> truncate_middle(list(range(10)), 6, head=2)
        [0, 1, 6, 7, 8, 9]

    """
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")
    head = max_length // 2 if head is None else head
    if not 0 <= head <= max_length:
        raise ValueError(f"head must be in [0, {max_length}], got {head}")
    if len(ids) <= max_length:
        return ids
    tail = max_length - head
    return [*ids[:head], *ids[len(ids) - tail :]]


def _turn_row(turn: int, prompt: list[int], action: list[int], max_length: int | None) -> _Row:
    """One turn as its own row; too long a prompt loses its middle (never the action)."""
    if max_length is not None:
        if len(action) >= max_length:
            raise ValueError(
                f"turn {turn}: the action has {len(action)} tokens; max_length is "
                f"{max_length} and the prompt needs at least one"
            )
        prompt = truncate_middle(prompt, max_length - len(action))
    return [*prompt, *action], [(len(prompt), len(prompt) + len(action), turn)]


def _stack(rows: list[_Row], pad: int, num_turns: int) -> TokenizedTurns:
    width = max(len(ids) for ids, _ in rows)
    input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    turn_index = torch.full((len(rows), width), -1, dtype=torch.long)
    for row, (ids, spans) in enumerate(rows):
        input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        attention_mask[row, : len(ids)] = 1
        for start, stop, turn in spans:
            turn_index[row, start:stop] = turn
    action_mask = (turn_index >= 0).long()
    return TokenizedTurns(input_ids, attention_mask, action_mask, turn_index, num_turns)


def _pad_id(tokenizer: Tokenizer, end: list[int]) -> int:
    if tokenizer.pad_token_id is not None:
        return int(tokenizer.pad_token_id)
    return end[0] if end else 0


def encode_turns(
    tokenizer: Tokenizer,
    prompts: Sequence[str],
    actions: Sequence[str],
    *,
    max_length: int | None = None,
    add_end_token: bool = True,
    whole_sequence: bool = False,
) -> TokenizedTurns:
    """Tokenize (prompt, action) pairs for scoring or training, one row per turn.

    Args:
        tokenizer: The scored model's tokenizer.
        prompts: Formatted prompts (chat template applied, ending with the generation
            prompt).
        actions: The agent's messages, one per prompt.
        max_length: Longest sequence; a longer one loses the middle of its prompt (its
            first and last tokens stay, see :func:`truncate_middle`; the action is kept
            whole). An action alone this long raises.
        add_end_token: Append the tokenizer's end-of-turn (eos) token to the action.
        whole_sequence: Count every token of the row after its first (the prompt's too)
            as turn ``i``'s, as a trainer with no prompt mask does (the official policy
            step: its NLL term is then a mean over the whole chosen row). Two rows of one
            prompt score its tokens alike, so a DPO margin between them is unchanged.

    Returns:
        One row per turn; row ``i``'s action tokens have ``turn_index == i``.

    Raises:
        ValueError: If the lengths differ or an action does not fit in ``max_length``.

    """
    if len(prompts) != len(actions):
        raise ValueError(f"{len(prompts)} prompts but {len(actions)} actions")
    if not prompts:
        raise ValueError("no turns to encode")
    end = _end_ids(tokenizer, add_end_token)
    prompt_ids = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    action_ids = tokenizer(list(actions), add_special_tokens=False)["input_ids"]
    rows = []
    for turn, (prompt, action) in enumerate(zip(prompt_ids, action_ids)):
        action = [*action, *end]
        _check_turn(turn, prompt, action)
        ids, spans = _turn_row(turn, prompt, action, max_length)
        rows.append((ids, [(1, len(ids), turn)] if whole_sequence else spans))
    return _stack(rows, _pad_id(tokenizer, end), len(rows))


def _packed_row(
    prompts: Sequence[str],
    actions: Sequence[str],
    end_text: str,
    prompt_ids: list[list[int]],
    action_ids: list[list[int]],
    first_turn: int,
    max_length: int | None,
) -> _Row | None:
    """One dialogue as one row, or ``None`` when that would not score like its turns."""
    for t in range(len(prompts) - 1):
        # The template must not rewrite history: the next prompt extends this turn, as
        # text and as tokens (so every turn sees exactly the tokens of its own row).
        if not prompts[t + 1].startswith(prompts[t] + actions[t] + end_text):
            return None
        before = [*prompt_ids[t], *action_ids[t]]
        if prompt_ids[t + 1][: len(before)] != before:
            return None
    ids = [*prompt_ids[-1], *action_ids[-1]]
    if max_length is not None and len(ids) > max_length:
        return None
    spans = [
        (len(prompt), len(prompt) + len(action), first_turn + t)
        for t, (prompt, action) in enumerate(zip(prompt_ids, action_ids))
    ]
    return ids, spans


def encode_dialogues(
    tokenizer: Tokenizer,
    dialogues: Sequence[tuple[Sequence[str], Sequence[str]]],
    *,
    max_length: int | None = None,
    add_end_token: bool = True,
) -> TokenizedTurns:
    """Tokenize whole dialogues, one row each: every turn's log-probs in one sequence.

    A dialogue's row is its first prompt, first action and end token, then what the
    second prompt adds after that, the second action and end token, and so on: the last
    turn's prompt and action, with every turn's action tokens counted. Prompts and
    actions are tokenized apart, as at generation time, and a dialogue is packed only
    where turn ``t + 1``'s prompt tokens start with turn ``t``'s prompt, action and end
    tokens, so each packed turn sees exactly the tokens :func:`encode_turns` gives it
    and scores the same, in ``O(length)`` instead of ``O(turns x length)`` tokens.

    A dialogue falls back to one row per turn, exactly as :func:`encode_turns` encodes
    it (same truncation), when packing would change what a turn sees: a chat template
    that rewrites history (turn ``t + 1``'s prompt does not start with turn ``t``'s
    prompt + action + end-token text, or their tokens differ), or a packed row longer
    than ``max_length``.

    Args:
        tokenizer: The scored model's tokenizer.
        dialogues: ``(prompts, actions)`` per dialogue: each turn's formatted prompt
            (chat template applied, ending with the generation prompt; it contains the
            earlier turns' actions) and the agent's message.
        max_length: Longest row (see the fallback above; a fallback turn's prompt loses
            its middle as in :func:`encode_turns`).
        add_end_token: Append the tokenizer's end-of-turn (eos) token to each action.

    Returns:
        The encoded turns; turn indices number the turns of all dialogues in the order
        given (dialogue 0's turns first).

    Raises:
        ValueError: If a dialogue has no turns or different numbers of prompts and
            actions, or a fallback action does not fit in ``max_length``.

    """
    if not dialogues:
        raise ValueError("no turns to encode")
    end = _end_ids(tokenizer, add_end_token)
    end_text = tokenizer.eos_token if add_end_token else ""
    flat_prompts: list[str] = []
    flat_actions: list[str] = []
    for index, (prompts, actions) in enumerate(dialogues):
        if len(prompts) != len(actions):
            raise ValueError(f"dialogue {index}: {len(prompts)} prompts but {len(actions)} actions")
        if not prompts:
            raise ValueError(f"dialogue {index} has no turns")
        flat_prompts += prompts
        flat_actions += actions
    # Every full prompt is tokenized (O(turns x length) text, cheap next to the model):
    # the fallback needs them, and comparing them is how packing is proven exact.
    prompt_ids = tokenizer(flat_prompts, add_special_tokens=False)["input_ids"]
    action_ids = [
        [*ids, *end] for ids in tokenizer(flat_actions, add_special_tokens=False)["input_ids"]
    ]
    rows: list[_Row] = []
    first = 0
    for prompts, actions in dialogues:
        turns = range(first, first + len(prompts))
        for turn in turns:
            _check_turn(turn, prompt_ids[turn], action_ids[turn])
        dialogue_prompts = prompt_ids[turns.start : turns.stop]
        dialogue_actions = action_ids[turns.start : turns.stop]
        packed = _packed_row(
            prompts, actions, end_text, dialogue_prompts, dialogue_actions, first, max_length
        )
        if packed is not None:
            rows.append(packed)
        else:
            rows += [_turn_row(t, prompt_ids[t], action_ids[t], max_length) for t in turns]
        first = turns.stop
    return _stack(rows, _pad_id(tokenizer, end), first)


def response_template(tokenizer: Tokenizer) -> str:
    r"""Return the chat template's assistant header without its trailing whitespace.

    It is the text the generation prompt adds (Llama 3.1:
    ``<|start_header_id|>assistant<|end_header_id|>``, the official SWEET-RL critic's
    ``--response_template``); the whitespace after it (Llama's ``\n\n``) is then the
    first token of each response, as in the official mask.

    Raises:
        ValueError: If the template adds no generation prompt at the end of a chat.

    """
    chat = [{"role": "user", "content": "x"}]
    closed = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=False)
    opened = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    header = opened[len(closed) :].rstrip() if opened.startswith(closed) else ""
    if not header:
        raise ValueError("the tokenizer's chat template adds no assistant header to find")
    return header


def encode_response_spans(
    tokenizer: Tokenizer,
    dialogues: Sequence[tuple[Sequence[str], Sequence[str]]],
    *,
    template: str,
    max_length: int | None = None,
) -> TokenizedTurns:
    r"""Tokenize whole dialogues as the official SWEET-RL critic reads them, one row each.

    The official critic (OpenRLHF's DPO with ``--response_template`` and
    ``--mean_log_prob`` in the fork YifeiZhou02/collab_openrlhf) reads one text, the
    last turn's prompt and action, ``rstrip("\n")``-ed and given ``" "`` and the end
    token; it counts, after each occurrence of the template's tokens, every token up to
    and including the next end token. So the earlier turns count as the prompt shows
    them (the policy's ``history`` form, as the chat template renders it), each with the
    whitespace after its header (Llama's ``\n\n``) and its end token; the last turn
    counts that whitespace, the action, the ``" "`` and the end token.

    Counted span ``k`` is turn ``k`` of the dialogue (the last span always its last
    turn; spans beyond the turns go to the turn before it, turns without a span count
    no token). A row longer than ``max_length`` loses its middle as
    :func:`truncate_middle` cuts, counted tokens there with it (the official trainer
    cuts the end).

    Args:
        tokenizer: The scored model's tokenizer (with an eos token).
        dialogues: ``(prompts, actions)`` per dialogue, as :func:`encode_dialogues`
            takes them; only the last prompt and action are read.
        template: The response template (:func:`response_template`).
        max_length: Longest row.

    Returns:
        The encoded turns, numbered across dialogues as :func:`encode_dialogues` does.

    Raises:
        ValueError: On a dialogue without turns or with a mismatch of prompts and
            actions, or a template that tokenizes to nothing.

    """
    if not dialogues:
        raise ValueError("no turns to encode")
    eos = tokenizer.eos_token
    if tokenizer.eos_token_id is None:
        raise ValueError("the tokenizer has no eos token")
    marker = tokenizer(template, add_special_tokens=False)["input_ids"]
    if not marker:
        raise ValueError(f"the response template {template!r} has no tokens")
    texts = []
    for index, (prompts, actions) in enumerate(dialogues):
        if len(prompts) != len(actions) or not prompts:
            raise ValueError(f"dialogue {index}: {len(prompts)} prompts and {len(actions)} actions")
        text = (prompts[-1] + actions[-1]).rstrip("\n")
        texts.append(text if text.endswith(eos) else f"{text} {eos}")
    rows: list[_Row] = []
    first = 0
    encoded = tokenizer(texts, add_special_tokens=False)["input_ids"]
    for (prompts, _), ids in zip(dialogues, encoded):
        turns = len(prompts)
        ids = list(ids)
        ids[-1] = tokenizer.eos_token_id  # as the official trainer (an end token cut off)
        found = _response_spans(ids, marker, tokenizer.eos_token_id)
        spans = [
            (start, stop, first + (turns - 1 if k == len(found) - 1 else min(k, turns - 2)))
            for k, (start, stop) in enumerate(found)
        ]
        if turns == 1:
            spans = [(start, stop, first) for start, stop, _ in spans]
        rows.append(_cut_middle(ids, spans, max_length))
        first += turns
    return _stack(rows, _pad_id(tokenizer, [tokenizer.eos_token_id]), first)


def encode_ranked_candidates(
    tokenizer: Tokenizer,
    prompts: Sequence[str],
    actions: Sequence[str],
    *,
    max_length: int | None = None,
) -> TokenizedTurns:
    r"""Tokenize candidates as the official ranking script scores them, one row each.

    rank_best_of_n.py reads the hinted prompt, the candidate and a generation prompt
    after it, drops the log-probs of the four tokens it appended, and averages those
    after the last end token: the prompt's own generation prompt (Llama 3.1's four
    header tokens ``<|start_header_id|>assistant<|end_header_id|>\n\n``) and the
    candidate, with no end token. Here each row is the prompt and the candidate, and
    its counted tokens are those after the prompt's last end token. A prompt too long
    loses its middle as in :func:`encode_turns`.

    Args:
        tokenizer: The scored model's tokenizer (with an eos token).
        prompts: Formatted prompts (ending with the generation prompt).
        actions: One candidate per prompt.
        max_length: Longest row.

    Raises:
        ValueError: If the lengths differ or there are none.

    """
    if len(prompts) != len(actions):
        raise ValueError(f"{len(prompts)} prompts but {len(actions)} actions")
    if not prompts:
        raise ValueError("no turns to encode")
    eos = tokenizer.eos_token_id
    prompt_ids = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    action_ids = tokenizer(list(actions), add_special_tokens=False)["input_ids"]
    rows: list[_Row] = []
    for turn, (prompt, action) in enumerate(zip(prompt_ids, action_ids)):
        ids, _ = _turn_row(turn, prompt, action, max_length)
        prompt = ids[: len(ids) - len(action)]
        ends = [i for i, token in enumerate(prompt) if token == eos]
        start = max(ends[-1] + 1 if ends else 1, 1)  # the first token has no log-prob
        rows.append((ids, [(start, len(ids), turn)] if start < len(ids) else []))
    return _stack(rows, _pad_id(tokenizer, [eos] if eos is not None else []), len(rows))


def _response_spans(ids: list[int], marker: list[int], eos: int) -> list[tuple[int, int]]:
    """Return the official mask's spans: after each ``marker``, up to and including the next eos."""
    spans = []
    width = len(marker)
    for at in range(len(ids) - width + 1):
        if ids[at : at + width] != marker:
            continue
        start = at + width
        stop = next((j for j in range(start, len(ids)) if ids[j] == eos), len(ids) - 1)
        if start <= stop:
            spans.append((start, stop + 1))
    return spans


def _cut_middle(ids: list[int], spans: list[tuple[int, int, int]], max_length: int | None) -> _Row:
    """:func:`truncate_middle` for a row with counted spans (those in the cut go with it)."""
    if max_length is None or len(ids) <= max_length:
        return ids, spans
    head = max_length // 2
    removed = len(ids) - max_length
    kept = []
    for start, stop, turn in spans:
        if start < head:
            kept.append((start, min(stop, head), turn))
        if stop > head + removed:
            kept.append((max(start, head + removed) - removed, stop - removed, turn))
    return truncate_middle(ids, max_length), kept


def encode_turn_pairs(
    tokenizer: Tokenizer,
    prompts: Sequence[str],
    first: Sequence[str],
    second: Sequence[str],
    *,
    max_length: int | None = None,
    add_end_token: bool = True,
) -> TokenizedTurns:
    """Tokenize two actions per prompt (preference pairs), the prompt read once per pair.

    Pair ``k``'s row is its prompt, then ``first[k]`` and ``second[k]`` as two branches:
    each branch is the prompt's last token followed by the action and end token, at the
    positions it would have in a row of its own, and attends to the prompt's other
    tokens and its own, never to the other branch. So each action's log-probs are
    :func:`encode_turns`'s (up to floating-point rounding: another shape), for about half
    the tokens when the prompt is much longer than the actions. The repeated last prompt
    token is what predicts each branch's first action token.

    A pair whose prompt would lose its middle to ``max_length`` in either plain row is
    encoded as those two plain rows (:func:`encode_turns`'s truncation), so it scores as
    before; a packed row may be longer than ``max_length``, as each branch with the
    prompt fits it.

    Args:
        tokenizer: The scored model's tokenizer.
        prompts: Formatted prompts (chat template applied), one per pair.
        first: One action per prompt (e.g. the chosen one): turns ``0 .. n - 1``.
        second: The other action per prompt: turns ``n .. 2n - 1``.
        max_length: Longest plain row (see above).
        add_end_token: Append the tokenizer's end-of-turn (eos) token to each action.

    Returns:
        The encoded turns, with ``branch`` and ``position_ids``; turn ``k`` is
        ``first[k]`` and turn ``n + k`` is ``second[k]``, as ``encode_turns(prompts * 2,
        first + second)`` numbers them.

    Raises:
        ValueError: If the lengths differ, there are no pairs, or an action does not fit
            in ``max_length``.

    """
    if not len(prompts) == len(first) == len(second):
        raise ValueError(f"{len(prompts)} prompts, {len(first)} and {len(second)} actions")
    if not prompts:
        raise ValueError("no turns to encode")
    end = _end_ids(tokenizer, add_end_token)
    prompt_ids = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    first_ids = tokenizer(list(first), add_special_tokens=False)["input_ids"]
    second_ids = tokenizer(list(second), add_special_tokens=False)["input_ids"]
    n = len(prompts)
    rows: list[tuple[list[int], list[tuple[int, int, int]], list[int], list[int]]] = []
    for k, prompt in enumerate(prompt_ids):
        actions = ([*first_ids[k], *end], [*second_ids[k], *end])
        for turn, action in zip((k, n + k), actions):
            _check_turn(turn, prompt, action)
        longest = len(prompt) + max(len(a) for a in actions)
        if max_length is not None and longest > max_length:
            for turn, action in zip((k, n + k), actions):
                ids, spans = _turn_row(turn, prompt, action, max_length)
                rows.append((ids, spans, [1] * len(ids), list(range(len(ids)))))
            continue
        shared = len(prompt) - 1
        ids, spans = list(prompt[:shared]), []
        branch, positions = [0] * shared, list(range(shared))
        for number, (turn, action) in enumerate(zip((k, n + k), actions), start=1):
            start = len(ids) + 1  # after the repeated last prompt token
            ids += [prompt[-1], *action]
            spans.append((start, start + len(action), turn))
            branch += [number] * (1 + len(action))
            positions += range(shared, shared + 1 + len(action))
        rows.append((ids, spans, branch, positions))
    plain = _stack([(ids, spans) for ids, spans, _, _ in rows], _pad_id(tokenizer, end), 2 * n)
    branch = torch.full(plain.input_ids.shape, -1, dtype=torch.long)
    position_ids = torch.zeros(plain.input_ids.shape, dtype=torch.long)
    for row, (_, _, row_branch, row_positions) in enumerate(rows):
        branch[row, : len(row_branch)] = torch.tensor(row_branch, dtype=torch.long)
        position_ids[row, : len(row_positions)] = torch.tensor(row_positions, dtype=torch.long)
    return TokenizedTurns(
        plain.input_ids,
        plain.attention_mask,
        plain.action_mask,
        plain.turn_index,
        plain.num_turns,
        branch,
        position_ids,
    )


# -- Scoring -----------------------------------------------------------------------------

# Attention implementations that take a (rows, 1, length, length) mask as given: SDPA as
# a boolean mask, eager added to the scores (flash kernels take none).
_BRANCH_MASKS = ("sdpa", "eager")


def branch_rows_supported(model: CausalLM) -> bool:
    """Whether ``model`` can score :func:`encode_turn_pairs`' branched rows.

    They need an attention that takes an arbitrary mask (transformers' ``sdpa`` or
    ``eager``; not flash attention) and position ids, and layers that all attend to every
    earlier token: a sliding window would be lost under the block mask.
    """
    inner = _unwrap(model)
    config = getattr(inner, "config", None)
    attention = getattr(config, "_attn_implementation", None)
    return attention in _BRANCH_MASKS and plain_causal_attention(inner)


def branch_mask(model: CausalLM, branch: torch.Tensor) -> torch.Tensor:
    """Return the ``(rows, 1, length, length)`` mask of branched rows, in the model's form.

    Query ``i`` sees key ``j <= i`` of branch 0 or of its own branch; a padding query
    sees only the row's first token (never nothing, which would give NaN), so a token
    sees itself exactly when it is real. Pass it as ``attention_mask``, with each
    branch's ``position_ids``, to a model :func:`branch_rows_supported` accepts.

    Args:
        model: The model that reads the rows (its attention implementation sets the
            mask's form: boolean for SDPA, additive for eager).
        branch: ``(rows, length)``: 0 on the shared tokens, ``k >= 1`` on branch ``k``'s
            own tokens, -1 on padding (:attr:`TokenizedTurns.branch`).

    Raises:
        ValueError: If the model's attention takes no such mask.

    """
    length = branch.shape[1]
    causal = torch.ones(length, length, dtype=torch.bool, device=branch.device).tril()
    keys, queries = branch[:, None, :], branch[:, :, None]
    allowed = causal & ((keys == 0) | (keys == queries)) & (queries >= 0)
    allowed[:, :, 0] |= branch < 0
    allowed = allowed[:, None]
    config = getattr(_unwrap(model), "config", None)
    if getattr(config, "_attn_implementation", None) == "sdpa":
        return allowed
    if getattr(config, "_attn_implementation", None) != "eager":
        raise ValueError(
            "branched rows (encode_turn_pairs) need attn_implementation 'sdpa' or 'eager'; "
            "check branch_rows_supported(model) and encode plain rows instead"
        )
    blocked = torch.finfo(torch.float32).min
    return torch.zeros(allowed.shape, device=branch.device).masked_fill(~allowed, blocked)


def _unwrap(model: CausalLM) -> CausalLM:
    """Return the causal LM inside DDP / accelerate / ``torch.compile`` / peft wrappers."""
    for _ in range(8):
        if hasattr(model, "_orig_mod"):  # torch.compile
            model = model._orig_mod
        elif not hasattr(model, "get_output_embeddings") and isinstance(
            getattr(model, "module", None), torch.nn.Module
        ):  # DistributedDataParallel, DataParallel, DeepSpeed
            model = model.module
        elif callable(getattr(model, "get_base_model", None)):  # peft (LoRA stays injected)
            model = model.get_base_model()
        else:
            break
    return model


def _chunkable_head(model: CausalLM) -> torch.nn.Module | None:
    """Return the output head to apply in chunks (``None``: only full logits are exact)."""
    inner = _unwrap(model)
    get_head = getattr(inner, "get_output_embeddings", None)
    head = get_head() if callable(get_head) else None
    if not isinstance(head, torch.nn.Module):
        return None
    config = getattr(inner, "config", None)
    for part in (config, getattr(config, "text_config", None)):
        for name in _POST_HEAD_TRANSFORMS:
            value = getattr(part, name, None) if part is not None else None
            neutral = name != "final_logit_softcapping" and value == 1  # a scale of 1
            if value is not None and not neutral:
                return None
    return head


def _chunk_logps(
    head_forward: Callable[..., Any], hidden: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """Log-softmax of one chunk's logits at the target tokens (fp32, as the full path)."""
    logits = head_forward(hidden.unsqueeze(0))[0].float()
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(logits, dim=-1)


def _forward(model: CausalLM, turns: TokenizedTurns, past: _Past | None) -> Any:
    """Run the model on ``turns``, after the ``past`` prefix's states if given."""
    if turns.branch is not None:
        if past is not None:
            raise ValueError("branched rows continue no shared prefix's states")
        return model(
            input_ids=turns.input_ids,
            attention_mask=branch_mask(model, turns.branch),
            position_ids=turns.position_ids,
            use_cache=False,
        )
    if past is None:
        return model(
            input_ids=turns.input_ids, attention_mask=turns.attention_mask, use_cache=False
        )
    states, length = past
    prefix_mask = turns.attention_mask.new_ones((len(turns), length))
    return model(
        input_ids=turns.input_ids,
        attention_mask=torch.cat([prefix_mask, turns.attention_mask], dim=1),
        **cache_arguments(states),
    )


def _full_logits_logprobs(
    model: CausalLM, turns: TokenizedTurns, past: _Past | None = None
) -> torch.Tensor:
    """Every position's fp32 log-softmax: the reference path, ``(rows, length, vocab)``."""
    logits = _forward(model, turns, past).logits
    # Token t is predicted by the logits at position t - 1.
    logits = logits[:, :-1].float()
    token_logps = logits.gather(-1, turns.input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return token_logps - torch.logsumexp(logits, dim=-1)


def _chunked_logprobs(
    model: CausalLM,
    head: torch.nn.Module,
    turns: TokenizedTurns,
    chunk_size: int,
    past: _Past | None = None,
) -> torch.Tensor | None:
    """Score the action positions through a chunked head; ``None`` if not exact."""
    rows, positions = turns.action_mask[:, 1:].nonzero(as_tuple=True)
    targets = turns.input_ids[rows, positions + 1]
    shape = (turns.input_ids.shape[0], turns.input_ids.shape[1] - 1)
    own = head.__dict__.get("forward")  # a patch someone else installed on the instance
    original = head.forward
    computed: list[torch.Tensor] = []

    def chunked_head(hidden: torch.Tensor) -> torch.Tensor:
        if tuple(hidden.shape[:2]) != tuple(turns.input_ids.shape):  # the model sliced
            return original(hidden)
        picked = hidden[rows, positions]  # (action tokens, hidden): only what is scored
        parts = []
        for start in range(0, picked.shape[0], chunk_size):
            args = (
                original,
                picked[start : start + chunk_size],
                targets[start : start + chunk_size],
            )
            if torch.is_grad_enabled():  # recompute the chunk's logits in backward
                parts.append(checkpoint(_chunk_logps, *args, use_reentrant=False))
            else:
                parts.append(_chunk_logps(*args))
        logps = torch.cat(parts) if parts else picked.new_zeros(0, dtype=torch.float32)
        out = logps.new_zeros(shape).index_put((rows, positions), logps)
        computed.append(out)
        return out  # stands in for the logits: it leaves through every wrapper's forward

    head.forward = chunked_head
    try:
        result = _forward(model, turns, past).logits
    finally:
        if own is None:
            del head.forward  # the class's forward shows again
        else:
            head.forward = own
    # The model must have returned exactly what the head gave it (wrappers may copy it,
    # e.g. DDP's output sink): any transform after the head means it was not a plain map.
    if (
        len(computed) != 1
        or not isinstance(result, torch.Tensor)
        or result.shape != computed[0].shape
        or not torch.equal(result.detach(), computed[0].detach())
    ):
        return None
    return result


def token_logprobs(
    model: CausalLM, turns: TokenizedTurns, *, chunk_size: int = HEAD_CHUNK_SIZE
) -> tuple[torch.Tensor, torch.Tensor]:
    """Compute each counted token's log-probability under ``model`` in one forward pass.

    The model's forward runs as usual (through its wrappers, so DDP/FSDP hooks and
    peft's LoRA layers work) but its output head is applied only to the positions that
    predict action tokens, ``chunk_size`` at a time: no ``(rows, length, vocab)`` logits.
    Models that transform the logits after the head (``final_logit_softcapping``,
    ``logit_scale``, ``logits_scaling`` in their config), or whose forward returns
    anything but what the head gave it, or that have no ``get_output_embeddings``, are
    scored from full logits instead (a warning says so for the second kind).

    Args:
        model: A causal LM (``transformers``), possibly wrapped (DDP, accelerate, peft).
        turns: From :func:`encode_turns` or :func:`encode_dialogues` (already on the
            model's device).
        chunk_size: Positions per application of the head.

    Returns:
        ``(token_logps, mask)``, each ``(rows, length - 1)``: the log-prob of token
        ``t + 1`` given the tokens up to ``t`` (float32; 0 where the mask is 0), and 1.0
        where that token is part of an action.

    """
    return _token_logprobs(model, turns, chunk_size, None)


def _token_logprobs(
    model: CausalLM, turns: TokenizedTurns, chunk_size: int, past: _Past | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`token_logprobs`, the rows optionally continuing a shared ``past`` prefix."""
    mask = turns.action_mask[:, 1:].float()
    head = _chunkable_head(model)
    token_logps = (
        _chunked_logprobs(model, head, turns, chunk_size, past) if head is not None else None
    )
    if token_logps is None:
        if head is not None:
            warnings.warn(
                f"{type(_unwrap(model)).__name__}: its forward changes the head's output; "
                "scoring from full logits (a second forward pass)",
                RuntimeWarning,
                stacklevel=2,
            )
        full = _full_logits_logprobs(model, turns, past)
        token_logps = torch.where(mask.bool(), full, 0.0)
    return token_logps, mask


def turn_logprobs(
    model: CausalLM, turns: TokenizedTurns, *, micro_batch_size: int | None = None
) -> TurnLogProbs:
    """Compute the log-probabilities of each turn's action under ``model``.

    Gradients flow when called with grad enabled (training); wrap in
    ``torch.no_grad()`` for frozen references.

    Args:
        model: A causal LM (see :func:`token_logprobs`).
        turns: From :func:`encode_turns` or :func:`encode_dialogues`.
        micro_batch_size: Rows per forward pass (default: all at once).

    Returns:
        Per-turn sum, mean and token count, each ``(turns.num_turns,)``, in turn-index
        order whichever encoding made ``turns``.

    """
    device = next(model.parameters()).device
    size = micro_batch_size or len(turns)
    total = torch.zeros(turns.num_turns, device=device)
    count = torch.zeros(turns.num_turns, device=device)
    for start in range(0, len(turns), size):
        part = turns.select(slice(start, start + size)).to(device)
        total, count = _add_turns(total, count, part, *token_logprobs(model, part))
    return TurnLogProbs(sum=total, mean=total / count.clamp(min=1), num_tokens=count)


def _add_turns(
    total: torch.Tensor,
    count: torch.Tensor,
    turns: TokenizedTurns,
    token_logps: torch.Tensor,
    mask: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Add counted tokens' log-probs and counts into their turns' totals."""
    index = turns.turn_index[:, 1:]
    counted = index >= 0
    total = total.index_add(0, index[counted], token_logps[counted])
    count = count.index_add(0, index[counted], mask[counted])
    return total, count


def _prefix_forward(model: CausalLM, prefix: torch.Tensor) -> Any:
    """Run the shared prefix for its key/value states, projecting one position's logits.

    Its logits are not used: ``logits_to_keep=1`` spares the output head (a vocabulary's
    worth of numbers per position) where the model takes it; other models compute all.
    """
    try:
        return model(input_ids=prefix, use_cache=True, logits_to_keep=1)
    except TypeError:
        return model(input_ids=prefix, use_cache=True)


def shared_prefix_length(turns: TokenizedTurns) -> int:
    """Return how many leading tokens every row has in common before its first action.

    The shared part stops one token before the earliest counted token, whose log-prob
    is read from the position before it.
    """
    counted = turns.action_mask.bool()
    if not counted.any(dim=1).all():
        return 0
    first_action = int(counted.float().argmax(dim=1).min())
    ids = turns.input_ids
    differs = (ids != ids[:1]).any(dim=0).nonzero()
    common = int(differs[0]) if len(differs) else ids.shape[1]
    return max(0, min(common, first_action - 1))


@torch.no_grad()
def shared_prefix_turn_logprobs(model: CausalLM, turns: TokenizedTurns) -> TurnLogProbs:
    """:func:`turn_logprobs` for rows that start alike, the common start computed once.

    Scoring several candidate actions for one prompt (SWEET-RL's critic) repeats the
    prompt in every row; here the model reads the rows' common prefix once, and each
    row's rest attends to those key/value states. The result is :func:`turn_logprobs`'s
    up to floating-point rounding (another batch shape). No gradients. Rows with less
    than a token in common, and models whose forward returns no reusable cache, are
    scored the plain way.

    Args:
        model: A causal LM (see :func:`token_logprobs`).
        turns: From :func:`encode_turns`, typically one prompt with several actions.

    Returns:
        As :func:`turn_logprobs`.

    """
    length = shared_prefix_length(turns)
    device = next(model.parameters()).device
    turns = turns.to(device)
    states = None
    if length > 0:
        states = output_cache(_prefix_forward(model, turns.input_ids[:1, :length]))
    if states is None or not callable(getattr(states, "batch_repeat_interleave", None)):
        return turn_logprobs(model, turns)
    states.batch_repeat_interleave(len(turns))
    rest = TokenizedTurns(
        turns.input_ids[:, length:],
        turns.attention_mask[:, length:],
        turns.action_mask[:, length:],
        turns.turn_index[:, length:],
        turns.num_turns,
    )
    token_logps, mask = _token_logprobs(model, rest, HEAD_CHUNK_SIZE, (states, length))
    zeros = torch.zeros(turns.num_turns, device=device)
    total, count = _add_turns(zeros, zeros.clone(), rest, token_logps, mask)
    return TurnLogProbs(sum=total, mean=total / count.clamp(min=1), num_tokens=count)
