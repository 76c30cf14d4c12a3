"""Drawing the next token: one uniform number a row against the cumulative distribution.

``torch.multinomial`` draws one sample without replacement by giving every vocabulary
entry an exponential random number and taking the largest ratio, which on the CPU costs
a sizeable share of a small model's decoding step (docs/results.md, Speed). Inverse
transform sampling draws from the same distribution with one uniform number a row: a
cumulative sum and a binary search.

``transformers`` samples inside ``generate`` with ``torch.multinomial``, so
:func:`sampling_processors` hands ``generate`` the temperature and top-p warpers and
then :class:`InverseCdfSampler`, which draws the token and leaves it the only one
with a finite score: greedy decoding (``do_sample=False``) then takes it.
"""

from __future__ import annotations

import torch
from transformers import (
    LogitsProcessor,
    LogitsProcessorList,
    TemperatureLogitsWarper,
    TopPLogitsWarper,
)

__all__ = ["InverseCdfSampler", "sample_tokens", "sampling_processors"]

_ROWS_PER_CHUNK = 8
"""Rows sampled together: a few rows of a large vocabulary stay in the CPU's cache."""


def sample_tokens(scores: torch.Tensor) -> torch.Tensor:
    """Draw one token per row from ``softmax(scores)``, with torch's current random state.

    Args:
        scores: ``(rows, vocabulary)`` logits; ``-inf`` marks tokens that cannot be drawn.
            Every row needs at least one finite score.

    Returns:
        ``(rows,)`` token ids (int64).

    Raises:
        ValueError: If a row has no finite score or holds NaN (as ``torch.multinomial``
            refuses such a distribution, rather than draw from it).

    """
    picks = []
    for chunk in scores.split(_ROWS_PER_CHUNK):
        weights = (chunk - chunk.amax(dim=-1, keepdim=True)).exp()
        # fp64 sums: each token's share of the cumulative sum is exact to ~1e-16.
        cdf = weights.to(torch.float64).cumsum(dim=-1)
        if not torch.isfinite(cdf[:, -1]).all():
            raise ValueError("cannot sample: a row of scores is NaN or has no finite value")
        draws = torch.rand((len(chunk), 1), dtype=cdf.dtype, device=cdf.device) * cdf[:, -1:]
        picks.append(torch.searchsorted(cdf, draws, right=True).squeeze(1))
    # A draw rounded up to the total (odds ~1e-16) would point past the end.
    return torch.cat(picks).clamp_(max=scores.shape[-1] - 1)


class InverseCdfSampler(LogitsProcessor):
    """Draw each row's next token (:func:`sample_tokens`); only it keeps a finite score.

    Last in a ``generate`` call's ``logits_processor`` list, with ``do_sample=False``:
    greedy decoding then picks the drawn token.
    """

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        """Return ``-inf`` scores but 0 at each row's drawn token."""
        chosen = sample_tokens(scores)
        kept = torch.full_like(scores, float("-inf"))
        return kept.scatter_(1, chosen[:, None], 0.0)


def sampling_processors(temperature: float, top_p: float) -> LogitsProcessorList:
    """Return the processors that sample as ``do_sample=True`` would, for greedy ``generate``.

    Args:
        temperature: Sampling temperature (> 0).
        top_p: Nucleus mass in (0, 1]; 1 keeps every token.

    Returns:
        Temperature, then top-p (if below 1), then :class:`InverseCdfSampler`.

    Raises:
        ValueError: For a temperature of 0 or less, or a ``top_p`` outside (0, 1].

    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0 to sample, got {temperature}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    processors: list[LogitsProcessor] = [TemperatureLogitsWarper(temperature)]
    if top_p < 1:
        processors.append(TopPLogitsWarper(top_p))
    processors.append(InverseCdfSampler())
    return LogitsProcessorList(processors)
