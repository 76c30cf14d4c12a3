"""Multi-turn DPO: trajectory-level preference pairs, every agent turn trained."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from algorithms.base import Algorithm, require_items
from algorithms.batches import (
    Dialogue,
    DialogueBatch,
    DialoguePair,
    collate_dialogue_pairs,
    from_json,
    to_json,
)
from algorithms.config import TrainingConfig
from algorithms.logprobs import turn_logprobs
from algorithms.losses import dpo_loss, trajectory_scores
from algorithms.pairs import PAIR_RULES, TrajectoryPair, no_trajectory_pairs, trajectory_pairs
from sweetrl_gym.lm import CausalLM
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["MultiTurnDPO", "MultiTurnDPOConfig"]


@dataclass(frozen=True)
class MultiTurnDPOConfig(TrainingConfig):
    """Settings of :class:`MultiTurnDPO` (and every :class:`TrainingConfig` setting).

    Attributes:
        batch_size: Trajectory pairs per forward pass, two sequences each.
        beta: DPO inverse temperature (the paper's DPO setting: 0.1).
        nll_coef: Weight of an NLL term on the chosen trajectory's actions (0: plain DPO).
        nll_scope: ``"action"``: each action's mean token NLL, summed; ``"dialogue"``: one mean.
        pair_success_only: Pair only tasks with a success, as SWEET-RL's critic data.
        min_reward_gap: A rejected trajectory must score lower by more than this (with
            ``pair_rule="all"``: by at least this).
        pair_rule: ``"best"``: each task's best against each worse trajectory; ``"all"``:
            every two that differ (the official Frontend's trajectory pairs).

    """

    batch_size: int = 1
    beta: float = 0.1
    nll_coef: float = 0.0
    nll_scope: str = "action"
    pair_success_only: bool = True
    min_reward_gap: float = 0.0
    pair_rule: str = "best"

    REMOVED_SETTINGS: ClassVar[dict[str, str]] = {
        "max_pairs": "every trajectory pair is trained on",
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_positive("beta")
        self._check_non_negative("nll_coef", "min_reward_gap")
        self._check_choice("nll_scope", ("action", "dialogue"))
        self._check_choice("pair_rule", PAIR_RULES)


class MultiTurnDPO(Algorithm):
    """The paper's Multi-turn DPO baseline.

    Pairs come from the same task (its best trajectory vs each strictly worse one). A
    trajectory's log-probability is the sum of its agent turns' action log-probs, each
    turn formatted with the policy's chat template, so every turn is trained — not only
    the last — and the DPO loss compares whole dialogues. Each dialogue is one sequence
    (per-turn action masks), and ``batch_size`` pairs go through the model at a time.

    Example:
        >>> dpo = MultiTurnDPO(agent, MultiTurnDPOConfig(beta=0.1))
        >>> metrics = dpo.fit(buffer)     # train/loss, train/reward_accuracy, ...

    """

    name = "mt-dpo"
    label = "MT-DPO"
    config_class = MultiTurnDPOConfig
    config: MultiTurnDPOConfig

    def train(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        """DPO on whole-dialogue pairs of each task's trajectories."""
        pairs = trajectory_pairs(
            buffer,
            success_only=self.config.pair_success_only,
            min_reward_gap=self.config.min_reward_gap,
            rule=self.config.pair_rule,
        )
        require_items(
            pairs, no_trajectory_pairs(len(buffer), success_only=self.config.pair_success_only)
        )
        items = from_json(
            DialoguePair, self.trainer.cached("trajectory_pairs", lambda: self._items(pairs))
        )
        stage = self.policy_stage(
            "policy",
            items,
            self._loss,
            collate_dialogue_pairs(self.encode_dialogues),
            length=DialoguePair.text_length,
        )
        metrics = self.run_stage(stage)
        return {**metrics, "train/num_pairs": float(len(pairs))}

    def _items(self, pairs: Sequence[TrajectoryPair]) -> list[dict[str, Any]]:
        """Each pair's dialogues with the frozen policy's per-turn summed log-probs."""
        dialogues = [
            Dialogue(self.policy_prompts(t.turns), [turn.action for turn in t.turns])
            for pair in pairs
            for t in (pair.chosen, pair.rejected)
        ]
        values = self.frozen_turn_logprobs(
            self.policy.model, dialogues, context=self.policy_reference
        )
        scored = [Dialogue(d.prompts, d.actions, v) for d, v in zip(dialogues, values)]
        return to_json([DialoguePair(scored[i], scored[i + 1]) for i in range(0, len(scored), 2)])

    def _loss(self, model: CausalLM, batch: DialogueBatch) -> tuple[torch.Tensor, dict[str, float]]:
        logps = turn_logprobs(model, batch.turns)
        index = batch.dialogue_index.to(logps.sum.device)
        totals = trajectory_scores(logps.sum, index, batch.num_dialogues)
        if self.config.nll_scope == "action":
            chosen_nll = -trajectory_scores(logps.mean, index, batch.num_dialogues)[0::2]
        else:
            counts = logps.num_tokens.to(totals.dtype)
            tokens = trajectory_scores(counts, index, batch.num_dialogues)
            chosen_nll = -totals[0::2] / tokens[0::2].clamp(min=1)
        reference = trajectory_scores(
            batch.reference.to(totals.device, totals.dtype), index, batch.num_dialogues
        )
        out = dpo_loss(
            totals[0::2],
            totals[1::2],
            reference[0::2],
            reference[1::2],
            beta=self.config.beta,
            chosen_nll=chosen_nll,
            nll_coef=self.config.nll_coef,
        )
        return out.loss, {
            "reward_accuracy": float(out.reward_accuracy),
            "reward_margin": float(out.reward_margin),
        }
