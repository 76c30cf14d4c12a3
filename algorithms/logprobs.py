"""Log-probabilities of agent actions under a causal LM, per turn, batched with padding.

Every algorithm scores a turn the same way: the turn's prompt (its structured messages
formatted with the scored model's own chat template, e.g.
:meth:`agents.TransformersAgent.format_prompts`) followed by the action and the
end-of-turn token; only the action's tokens (and that end token, so the model learns
to stop) count. Prompt and action are tokenized apart, as they are at generation time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["TokenizedTurns", "TurnLogProbs", "encode_turns", "token_logprobs", "turn_logprobs"]


@dataclass(frozen=True)
class TokenizedTurns:
    """Right-padded token ids of (prompt, action) pairs.

    Attributes:
        input_ids: ``(batch, length)`` prompt then action then end-of-turn token.
        attention_mask: ``(batch, length)`` 1 on real tokens.
        action_mask: ``(batch, length)`` 1 on the tokens whose log-probs count.

    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    action_mask: torch.Tensor

    def __len__(self) -> int:
        """Return the number of turns."""
        return int(self.input_ids.shape[0])

    def select(self, rows: slice | Sequence[int]) -> TokenizedTurns:
        """Return some of the turns, trimmed to their longest real sequence."""
        mask = self.attention_mask[rows]
        width = int(mask.sum(dim=1).max()) if mask.numel() else 0
        return TokenizedTurns(
            self.input_ids[rows][:, :width],
            mask[:, :width],
            self.action_mask[rows][:, :width],
        )

    def to(self, device: Any) -> TokenizedTurns:
        """Return the tensors on ``device``."""
        return TokenizedTurns(
            self.input_ids.to(device), self.attention_mask.to(device), self.action_mask.to(device)
        )


@dataclass(frozen=True)
class TurnLogProbs:
    """Log-probabilities of each turn's action tokens.

    Attributes:
        sum: ``(batch,)`` summed log-probs of the action tokens.
        mean: ``(batch,)`` their mean (length-normalised; SWEET-RL's parameterisation).
        num_tokens: ``(batch,)`` how many tokens counted.

    """

    sum: torch.Tensor
    mean: torch.Tensor
    num_tokens: torch.Tensor


def encode_turns(
    tokenizer: Any,
    prompts: Sequence[str],
    actions: Sequence[str],
    *,
    max_length: int | None = None,
    add_end_token: bool = True,
) -> TokenizedTurns:
    """Tokenize (prompt, action) pairs for scoring or training.

    Args:
        tokenizer: The scored model's tokenizer.
        prompts: Formatted prompts (chat template applied, ending with the generation
            prompt).
        actions: The agent's messages, one per prompt.
        max_length: Longest sequence; longer ones lose the start of their prompt (the
            action is kept whole). An action alone longer than this raises.
        add_end_token: Append the tokenizer's end-of-turn (eos) token to the action.

    Raises:
        ValueError: If the lengths differ or an action does not fit in ``max_length``.

    """
    if len(prompts) != len(actions):
        raise ValueError(f"{len(prompts)} prompts but {len(actions)} actions")
    if not prompts:
        raise ValueError("no turns to encode")
    end = [tokenizer.eos_token_id] if add_end_token else []
    if add_end_token and tokenizer.eos_token_id is None:
        raise ValueError("the tokenizer has no eos token; pass add_end_token=False")
    prompt_ids = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    action_ids = tokenizer(list(actions), add_special_tokens=False)["input_ids"]
    rows = []
    for index, (prompt, action) in enumerate(zip(prompt_ids, action_ids)):
        action = [*action, *end]
        if not action:
            raise ValueError(f"turn {index}: empty action and no end token")
        if not prompt:
            raise ValueError(f"turn {index}: empty prompt (nothing predicts the first token)")
        if max_length is not None:
            if len(action) >= max_length:
                raise ValueError(
                    f"turn {index}: the action has {len(action)} tokens; max_length is "
                    f"{max_length} and the prompt needs at least one"
                )
            prompt = prompt[max(0, len(prompt) + len(action) - max_length) :]
        rows.append((prompt, action))
    width = max(len(p) + len(a) for p, a in rows)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else end[0] if end else 0
    input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    action_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for row, (prompt, action) in enumerate(rows):
        length = len(prompt) + len(action)
        input_ids[row, :length] = torch.tensor([*prompt, *action], dtype=torch.long)
        attention_mask[row, :length] = 1
        action_mask[row, len(prompt) : length] = 1
    return TokenizedTurns(input_ids, attention_mask, action_mask)


def token_logprobs(model: Any, turns: TokenizedTurns) -> tuple[torch.Tensor, torch.Tensor]:
    """Compute each target token's log-probability under ``model`` in one forward pass.

    Args:
        model: A causal LM returning ``.logits`` of shape ``(batch, length, vocab)``.
        turns: From :func:`encode_turns` (already on the model's device).

    Returns:
        ``(token_logps, mask)``, each ``(batch, length - 1)``: the log-prob of token
        ``t + 1`` given the tokens up to ``t`` (float32), and 1.0 where that token is
        part of the action.

    """
    logits = model(input_ids=turns.input_ids, attention_mask=turns.attention_mask).logits
    # Token t is predicted by the logits at position t - 1.
    logits = logits[:, :-1].float()
    targets = turns.input_ids[:, 1:]
    token_logps = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    token_logps = token_logps - torch.logsumexp(logits, dim=-1)
    return token_logps, turns.action_mask[:, 1:].to(token_logps.dtype)


def turn_logprobs(
    model: Any, turns: TokenizedTurns, *, micro_batch_size: int | None = None
) -> TurnLogProbs:
    """Compute the log-probabilities of each turn's action under ``model``.

    Gradients flow when called with grad enabled (training); wrap in
    ``torch.no_grad()`` for frozen references.

    Args:
        model: A causal LM returning ``.logits`` of shape ``(batch, length, vocab)``.
        turns: From :func:`encode_turns`.
        micro_batch_size: Rows per forward pass (default: all at once).

    Returns:
        Per-turn sum, mean and token count.

    """
    device = next(model.parameters()).device
    size = micro_batch_size or len(turns)
    sums, counts = [], []
    for start in range(0, len(turns), size):
        part = turns.select(slice(start, start + size)).to(device)
        token_logps, mask = token_logprobs(model, part)
        sums.append((token_logps * mask).sum(dim=1))
        counts.append(mask.sum(dim=1))
    total, count = torch.cat(sums), torch.cat(counts)
    return TurnLogProbs(sum=total, mean=total / count.clamp(min=1), num_tokens=count)
