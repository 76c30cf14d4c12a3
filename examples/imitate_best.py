r"""A complete algorithm of your own, written on the public API: imitate each task's best episode.

Copy this file into a package of yours; ``sweetrl compare`` then runs it beside the built-in
methods by its import path, its settings read from the config's ``[methods.imitate-best]``
section and checked by :class:`ImitateBestConfig` before any work::

    PYTHONPATH=examples sweetrl compare --config smoke --out runs/mine \
        --set "methods.run=['imitate_best:ImitateBest', 'sweet-rl']" \
        --set methods.imitate-best.min_reward=0.5

From Python::

    from imitate_best import ImitateBest
    ImitateBest(policy, min_reward=0.5, output_dir="runs/mine").fit(buffer)

The guide: docs/bring-your-own.md#an-algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from algorithms import (
    Algorithm,
    Dialogue,
    DialogueBatch,
    TrainingConfig,
    collate_dialogues,
    require_items,
    sft_loss,
    token_logprobs,
)
from sweetrl_gym import TrajectoryBuffer

__all__ = ["ImitateBest", "ImitateBestConfig"]


@dataclass(frozen=True)
class ImitateBestConfig(TrainingConfig):
    """Settings of :class:`ImitateBest` (and every :class:`TrainingConfig` setting).

    Attributes:
        min_reward: A task's best episode is imitated only if its reward reaches this.

    """

    min_reward: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.min_reward <= 1.0:
            raise ValueError(f"min_reward must be in [0, 1], got {self.min_reward}")


class ImitateBest(Algorithm):
    """Supervised fine-tuning on each task's best episode (every agent turn of it)."""

    name = "imitate-best"  # its name in reports, run folders and [methods.NAME]
    config_class = ImitateBestConfig

    def train(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        """Fine-tune on each task's best episode whose reward reaches ``min_reward``."""
        best: dict[str, Any] = {}
        for episode in buffer:
            kept = best.get(episode.task_id)
            if kept is None or episode.reward > kept.reward:
                best[episode.task_id] = episode
        chosen = [e for e in best.values() if e.reward >= self.config.min_reward]
        require_items(chosen, f"no task has an episode with reward >= {self.config.min_reward}")
        # Typed items of plain text: a resumed run checks that it trains on the same.
        items = [
            Dialogue(self.policy_prompts(e.turns), [t.action for t in e.turns]) for e in chosen
        ]
        stage = self.policy_stage("policy", items, _loss, collate_dialogues(self.encode_dialogues))
        return {**self.run_stage(stage), "train/episodes": float(len(items))}


def _loss(model: Any, batch: DialogueBatch) -> tuple[Any, dict[str, float]]:
    """Return the mean negative log-likelihood of the actions (one row per dialogue)."""
    device = next(model.parameters()).device
    logps, mask = token_logprobs(model, batch.turns.to(device))
    return sft_loss(logps, mask), {"action_tokens": float(mask.sum())}
